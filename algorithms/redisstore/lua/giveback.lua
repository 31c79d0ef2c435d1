-- giveback.lua: giving back the units of an admitted Take
-- (algorithms.GiveBacker.GiveBack, mode 5), mirroring algorithms/giveback.go
-- and the kinds' give-back steps (fixedGiveBack, slidingGiveBack,
-- giveBack of sliding_log and sliding_buckets, bucketGiveBack; leaky_queue
-- is refund.lua's refundQueue). main.lua then decides the checks as a
-- peek (mode 3) and appends the given flags.
--
-- ARGV after the checks (main.lua's wide layout): one value per check:
-- 'n' for a denied Take's (nothing is given back), else in ns the time
-- from t to E, the instant the Take's decision said the key would be back
-- to full (ResetAfter - waited), or for a leaky_queue check its remaining
-- wait (Delay - waited); for a token_bucket or leaky_bucket check
-- "r w q": that time, the waited it took off (r + w is the ResetAfter) and
-- the units the Take left in use (C - Remaining). All are within 2^51 but
-- a window kind's time, within 2^51 + 4*MaxWindow < 2^52 (giveback.go's
-- windowArg: a key decides at its latest instant, up to 2^51 ns ahead of
-- t, when t is earlier).

-- giveBackOne gives back op's units; it reports whether any came back.
-- before maps a bucket key's note key to its note before the call (false
-- for none): the checks of one Take on one key are given back last first,
-- and a later check's units were counted after an earlier one's, so its
-- give-back moved none of them up (algorithms' ownNotes).
local function giveBackOne(op, minTTL, before)
  local P, n, r = op.P, op.n, op.v
  local kind = P.kind
  if kind == QUEUE then
    return refundQueue(op.key, P.L, P.W, n, r, minTTL)
  end
  if kind == FIXED or kind == SLIDING then
    local c, held = windowKinds().load(P, op.key)
    if not held then return false end
    -- The window whose end is nearest E = t + r: k + q - 1.
    local q = divmod(P.e + r + floor(P.W / 2), P.W)
    if kind == FIXED then
      if c.x == 0 or c.t < P.k or c.t ~= P.k + q - 1 then return false end
      c.x = c.x - math.min(n, c.x)
    else
      if c.t < P.k then
        if c.t ~= P.k - 1 then return false end -- both windows have passed
        c = {t = P.k, x = c.y, y = 0}
      end
      local start = P.k + q - 2 -- the Take's window
      if start == c.t and c.y > 0 then
        c.y = c.y - math.min(n, c.y)
      elseif start == c.t - 1 and c.x > 0 then
        c.x = c.x - math.min(n, c.x)
      else
        return false
      end
    end
    call('SET', op.key, windowKinds().encode(P, c), 'KEEPTTL')
    return true
  end
  if kind == BUCKETS then
    -- The ring R at the latest sub-window, rolled in this call only: a
    -- give-back rolls nothing (algorithms' bucketsView). A sub-window
    -- still in R's window with a count is in the stored ring S at the
    -- same slot (sub-window mod Buckets) with the same count.
    local M = bucketsKind()
    local S, held = M.load(P, op.key)
    if not held then return false end
    local off = M.off(P, S)
    if off > FAR then return false end -- as load: a state 26 days ahead is fresh
    local R = M.clone(S)
    M.roll(P, R, off)
    -- The Take's sub-window relative to R's newest: j - last.
    local q = divmod(P.es + r + floor(P.sub / 2), P.sub)
    local d = (P.jw - R.w) * P.B + (P.jb - R.b) + q - P.B
    if d > 0 or d <= -P.B then return false end
    local idx = (R.b + d) % P.B
    local c = R.counts[idx] or 0
    if c == 0 then return false end
    local k = math.min(n, c)
    S.counts[idx] = c - k
    S.sum = S.sum - k
    call('SET', op.key, M.encode(S), 'KEEPTTL')
    return true
  end
  if kind == LOG then
    -- Loaded as pruned at the latest instant, the pruning kept in this
    -- call only: a give-back forgets no event (algorithms' "Time that
    -- goes back"). The list keeps its events; the i-th is its item i - 1.
    load(op)
    if not op.exists then return false end
    local M, S = logKind(), op.S
    local at = r - P.W - 1 -- the caller's reckoning of the Take's instant
    -- The Take's instant has left the window (op.off is the latest
    -- instant's): its units no longer count.
    if at < op.off - P.W then return false end
    -- The event nearest at (a tie to the older): the newest at or before
    -- it, i, or the oldest after it, i + 1.
    local c = M.count(S)
    local i = c
    while i >= S.head and M.event(S, i).t > at do i = i - 1 end
    if i + 1 <= c and (i < S.head or M.event(S, i + 1).t - at < at - M.event(S, i).t) then
      i = i + 1
    end
    if i < S.head then return false end
    local e = M.event(S, i)
    local k = math.min(n, e.n)
    call('DECRBY', S.key, k) -- the total, which keeps its expiry
    local li = i - 1
    if e.n > k then
      local s, ns = absol(e.t)
      call('LSET', S.lkey, li, fmt(s) .. ' ' .. fmt(ns) .. ' ' .. fmt(e.n - k))
    else
      call('LSET', S.lkey, li, 'x')
      call('LREM', S.lkey, 1, 'x')
    end
    return true
  end
  -- token_bucket, leaky_bucket (algorithms' bucketGiveBack): the Take's
  -- deficit tau (D*L at its instant t - w) lies in (lo, hi], by its
  -- ResetAfter a and its Remaining's q; it is the one value of the
  -- deficit now at t - w, less whole units (m*W, m < C), in that range,
  -- else lo + 1, lowered by the key's note (notes.lua). F moves back by
  -- min(n*W/L, tau - w*L, F - t), and the note records the give-back.
  local c, held = bucketKinds().load(P, op.key)
  local r, w, q = op.v, op.w, op.q
  if not held or r <= 0 or q <= 0 then return false end
  local L, W = P.L, P.W
  local dl = deficitOf(c.t, c.x, L)
  if bcmp(dl, 0) <= 0 then return false end
  local a = r + w
  local hi, lo = bmul(a, L), bmul(a - 1, L)
  local qw = bmul(q, W)
  if bcmp(qw, hi) < 0 then hi = qw end
  qw = bmul(q - 1, W)
  if bcmp(lo, qw) < 0 then lo = qw end
  local wl = bmul(w, L)
  local tau = badd(lo, 1)
  local x = badd(dl, wl)
  if bcmp(x, hi) <= 0 then
    if bcmp(tau, x) < 0 then tau = x end
  else
    local d = bsub(x, hi)
    if bcmp(d, bmul(P.C, W)) <= 0 then
      local kw = bmul(bdivceil(d, W), W)
      if bcmp(x, kw) >= 0 then
        local y = bsub(x, kw)
        if bcmp(lo, y) < 0 then tau = y end
      end
    end
  end
  if bcmp(hi, tau) < 0 then tau = hi end
  local gkey = op.key .. ':g'
  local nt = notes().load(P, gkey, 0)
  if before[gkey] == nil then before[gkey] = nt or false end
  tau = notes().lower(P, before[gkey] or nil, tau, n, w)
  if bcmp(wl, tau) >= 0 then return false end
  local g = bsub(tau, wl)
  local ng = bmul(n, W)
  if bcmp(ng, g) < 0 then g = ng end
  if bcmp(dl, g) < 0 then g = dl end
  local ft, fx = 0, 0 -- g = dl: full at t
  if bcmp(g, dl) < 0 then
    local q0, rr = bdivmod(g, L)
    ft, fx = c.t - q0, c.x - rr
    if fx < 0 then
      fx = fx + L
      ft = ft - 1
    end
  end
  local s, ns = absol(ft)
  call('SET', op.key, format('%d %d %d', s, ns, fx), 'KEEPTTL')
  notes().given(P, gkey, nt, g, ft, fx, minTTL, 0)
  return true
end

-- giveBack gives back the checks of the call, the last first, after
-- loading every key (a value the store did not write fails the call
-- before any write). It returns the given flags, or nil and an error.
local function giveBack(nchecks, minTTL)
  local base = 5 + nchecks * 7
  if #ARGV ~= base + nchecks then
    return nil, redis.error_reply('redisstore: malformed give-back')
  end
  local ops, ki = {}, 1
  for i = 1, nchecks do
    local a = 5 + (i - 1) * 7
    local P = {
      kind = tonumber(ARGV[a + 1]), L = tonumber(ARGV[a + 2]), W = tonumber(ARGV[a + 3]),
      C = tonumber(ARGV[a + 4]), B = tonumber(ARGV[a + 5]), md = tonumber(ARGV[a + 6]),
    }
    local n = tonumber(ARGV[a + 7])
    local v, w, q = ARGV[base + i], 0, 0
    if v ~= 'n' then
      if P.kind == TOKEN or P.kind == LEAKY then
        v, w, q = match(v, '^(%-?%d+) (%d+) (%d+)$')
        w, q = tonumber(w), tonumber(q)
      end
      v = tonumber(v)
    end
    if not (P.kind and P.L and P.W and P.C and P.B and P.md and n and v and w and q) then
      return nil, redis.error_reply('redisstore: malformed give-back of check ' .. i)
    end
    local op = {P = P, n = n, key = KEYS[ki], v = v, w = w, q = q}
    ki = ki + 1
    if P.kind == LOG then
      op.lkey = KEYS[ki]
      ki = ki + 1
      logKind().load(P, op.key, op.lkey)
    elseif P.kind == FIXED or P.kind == SLIDING then
      P.k, P.e = windowOf(P.W)
      windowKinds().load(P, op.key)
    elseif P.kind == BUCKETS then
      P.sub = P.W / P.B
      P.jw, P.ew = windowOf(P.W)
      P.jb, P.es = divmod(P.ew, P.sub)
      bucketsKind().load(P, op.key)
    else
      bucketKinds().load(P, op.key)
    end
    ops[i] = op
  end
  local given, before = {}, {}
  for i = nchecks, 1, -1 do
    local op = ops[i]
    given[i] = op.v ~= 'n' and giveBackOne(op, minTTL, before)
  end
  return given
end
