-- fastlib.lua: the fast path's decisions (fast.lua runs them). Run as a
-- function (FCALL) these closures are made once, when the library loads;
-- run as a script, on each call.

local FS = 4 -- the fields per check in fast.lua's table f

-- The fast path's tables, made by fastTables at their size (a table that
-- grows is reallocated at every power of two: garbage, which the
-- collector then pays for). As a function they are made once, for the
-- most checks seen, and reused by every call: each call writes every field
-- it reads (out is cut after its replies by fast.lua).
local fastF, fastOut, fastSpecs, fastCap = nil, nil, nil, 0
local fastOut1 = {0, 0, 0, 0} -- the reply of a Take of one check

-- FASTMAX bounds the checks of a Take the fast path decides: its MGET
-- passes every key through unpack, which takes fewer than 8000 values
-- (Lua's LUAI_MAXCSTACK), so a larger Take goes to the general path,
-- which reads each key with a GET of its own. FASTPAIRS bounds the
-- checks whose keys are compared pair by pair, with no table made: past
-- it a table finds a key named twice, in time linear in the checks (the
-- pairs of 8000 checks, 32 million comparisons, held the server for about
-- a second).
local FASTMAX, FASTPAIRS = 4096, 16

-- The seconds of the server's last TIME, as its reply's string and as a
-- number: calls within one second parse them once (strings are interned,
-- so comparing them is cheap).
local timeSecS, timeSec = nil, 0

-- The fast path's last write of each key: memo[key] = {value, and the
-- three numbers it was formatted from}. A key that still
-- holds that value is not parsed again (string.match and three tonumber
-- cost more than the rest of a check's decision): the fast path writes
-- integers below 2^53 with %d, which parse back to themselves, so the
-- numbers are exactly those a parse would give, whoever wrote the value.
-- (A key's name spells its spec, so one key is always read as one kind.)
-- Only as a function: the library's code sets memoOn (script.go), and a
-- script's tables would live one call. At most memoCap keys: then the
-- table starts again (about 300 bytes a key of 50 bytes: TestLibraryMemory).
local memoOn, memo, nmemo = false, {}, 0
local memoCap = 4096

local function fastTables(n)
  if n <= fastCap then return end
  if n == 1 then
    fastF, fastOut = {0, 0, 0, 0}, {0, 0, 0, 0}
  elseif n == 2 then
    fastF, fastOut = {0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}
  elseif n <= 4 then
    fastF = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    fastOut = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    n = 4
  else
    fastF, fastOut = {}, {}
  end
  fastSpecs = {}
  fastCap = n
end

-- foreign fails the call on a value of key the store did not write (the
-- application's own key, under a prefix that collides with the store's):
-- read as an empty state, it would admit and then be overwritten. Every
-- check's state is loaded before any write, so nothing is written.
local function foreign(key)
  error('redisstore: key ' .. key .. ' holds a value the store did not write', 0)
end

-- reservedState returns the state of v, the value of a window or bucket
-- key, when a cross-slot reservation wrote it: the state, then "|" and
-- the reservations not known to be over, which only an undo reads
-- (cluster.lua); nil for any other value (every other write of the key
-- writes a state alone).
local function reservedState(v)
  return match(v, '^([^|]*)|%w')
end

-- The steps the fast path shares with cell.lua's kinds. They are here, at
-- the top level, because a script runs fast.lua before cell.lua: cell.lua's
-- closures call them too, so each step has one definition.

-- ceilDiv returns ceil(a/b) for 0 <= a < 2^52, 0 < b < 2^52.
local function ceilDiv(a, b)
  local q, r = divmod(a, b)
  if r > 0 then q = q + 1 end
  return q
end

-- slidingWait mirrors params.slidingWait: the shortest wait after which m
-- units are available. Quotients that may exceed 2^53 are only compared.
-- Each product is taken on plain numbers exactly when its computed value
-- is below 2^52: then it is exact (rounding is monotone and 2^52 is
-- representable), and one whose exact value reaches 2^52 computes to no
-- less than 2^52. Otherwise it is a wide value. (W - e) * prev is only
-- compared with X = a * W: when X is plain and the product not, X is
-- below it, which the rounded product tells exactly all the same: prev,
-- counted at whatever limit the checks of its window were judged at (up
-- to algorithms.MaxLimit), may pass L (algorithms.Check.Limit).
local function slidingWait(W, L, prev, curr, e, m)
  local a = L - curr - m
  if a >= 0 then
    if prev == 0 then return 0 end
    local f
    local X = a * W
    if X < T52 then
      if X >= (W - e) * prev then return 0 end
      f = divmod(X, prev)
    else
      numInit()
      X = bmul(a, W)
      if bcmp(X, bmul(W - e, prev)) >= 0 then return 0 end -- f >= W-e
      f = bdivmod(X, prev)
    end
    if f > 0 then return W - e - f end
  end
  if curr == 0 or L - m >= curr then return W - e end -- f = floor((L-m)*W/curr) >= W
  local f
  local Y = (L - m) * W
  if Y < T52 then
    f = divmod(Y, curr)
  else
    numInit()
    f = bdivmod(bmul(L - m, W), curr)
  end
  if f > 0 then return W - e + W - f end
  return 2 * W - e
end

-- The bucket kinds hold F = t + ft + fx/L ns (ft whole ns relative to t,
-- fx in [0, L)).

-- deficitOf returns D*L with D = max(0, F - t), as a wide value.
local function deficitOf(ft, fx, L)
  if ft < 0 or (ft == 0 and fx == 0) then return 0 end
  return badd(bmul(ft, L), fx)
end

-- advanceBy returns F = max(F, t) + n*W/L as (ft, fx), given q, r = the
-- quotient and remainder of n*W by L (divmod, or bdivmod on wide values).
local function advanceBy(ft, fx, L, q, r)
  if ft < 0 or (ft == 0 and fx == 0) then ft, fx = 0, 0 end
  ft = ft + q
  r = r + fx
  if r >= L then return ft + 1, r - L end
  return ft, r
end

-- bucketWait: C - ceil((D-w)*L/W) >= m  <=>  w*L >= D*L - (C-m)*W, for
-- dl = D*L a wide value.
local function bucketWait(C, W, L, dl, m)
  local room = bmul(C - m, W)
  if bcmp(room, dl) >= 0 then return 0 end
  return bdivceil(bsub(dl, room), L)
end

-- bucketWaitPlain is bucketWait when C*W and D*L are below 2^52.
local function bucketWaitPlain(C, W, L, dl, m)
  local room = (C - m) * W
  if room < dl then return ceilDiv(dl - room, L) end
  return 0
end

-- queueAvail is leakyQueue's Remaining: floor((MaxDelay*L - D*L)/W) + 1
-- units fit, none when D > MaxDelay; ml = MaxDelay*L and dl = D*L.
local function queueAvail(ml, W, dl)
  if bcmp(ml, dl) < 0 then return 0 end
  return bdivmod(bsub(ml, dl), W) + 1
end

-- queueWait: the wait w with w*L >= (m-1)*W + D*L - MaxDelay*L.
local function queueWait(ml, W, L, dl, m)
  local need = badd(bmul(m - 1, W), dl)
  if bcmp(ml, need) >= 0 then return 0 end
  return bdivceil(bsub(need, ml), L)
end

-- The fast path's checks: windowFast (fixed_window, sliding_window) and
-- bucketFast (token_bucket, leaky_bucket, leaky_queue) each load one check's
-- state from its key's value v (nil or false when the key is missing) and
-- decide it. p is the check's numbers (spec.lua: kind, L, W, C, Buckets,
-- MaxDelay, cost), key its key. They return whether the check is admitted,
-- the reply's four integers (main.lua), and, when consuming an admitted
-- check, its new state (fixed_window k, count; sliding_window k, prev,
-- curr; the bucket kinds F relative to t and its remainder) and whether a
-- window key is rewritten in the window it already holds (writeFast's
-- same). They are cell.lua's loadWindow, lateWindow and loadBucket, then
-- its kinds (fixedWindow, slidingWindow, tokenBucket and tokenFast,
-- leakyQueue), on plain numbers exactly where the general path has them.
-- The plain-number helpers a check runs on every call (divmod, ceilDiv,
-- advanceBy, bucketWaitPlain, rel, far, window's first two cases) are
-- written out in place: a Lua call costs more than the steps it runs.
-- Each "r = a % b; if r < 0 ... elseif r >= b ..." is divmod's remainder.

local function windowFast(kind, p, v, key, consume)
  local L, W = p[2], p[3]
  -- window(W): k and e for W a multiple of a second, or dividing one.
  local k, e
  if W % G == 0 then
    local d = W / G
    local r = TS % d
    if r < 0 then r = r + d elseif r >= d then r = r - d end
    k, e = (TS - r) / d, r * G + TN
  elseif G % W == 0 then
    local r = TN % W
    if r < 0 then r = r + W elseif r >= W then r = r - W end
    k, e = TS * (G / W) + (TN - r) / W, r
  else
    numInit()
    k, e = window(W)
  end
  -- loadWindow; a value the fast path wrote last is not parsed again.
  local t, x, y = k - 2, 0, 0
  if v then
    local m = memo[key]
    if m and m[1] == v then
      t, x, y = m[2], m[3], m[4]
    else
      local sk, sx, sy = match(v, '^(%-?%d+) (%d+) ?(%d*)$')
      if not sk then
        local h = reservedState(v)
        if h then sk, sx, sy = match(h, '^(%-?%d+) (%d+) ?(%d*)$') end
        if not sk then foreign(key) end
      end
      t, x, y = tonumber(sk), tonumber(sx), tonumber(sy) or 0
      if x > MAXCOUNT or y > MAXCOUNT then foreign(key) end -- as loadWindow
    end
  end
  -- lateWindow: a state ahead of t is decided at its window's start, off
  -- later (off > 0 exactly when t > k, since e < W); one more than 2^51 ns
  -- ahead is forgotten.
  local off = 0
  if t > k then
    off = (t - k) * W - e
    if off > 2251799813685248 then
      t, x, y, off = k - 2, 0, 0, 0
    else
      k, e = t, 0
    end
  end
  local n = p[7]
  local allowed, r, ra, rs, nx = false, 0, 0, 0, 0
  local s1, s2, s3
  if kind == 1 then
    -- fixedWindow
    local count = x
    if t ~= k then count = 0 end
    local ending = W - e
    if count + n <= L then
      allowed = true
      if consume then
        count = count + n
        s1, s2 = k, count
      end
    else
      ra = ending
    end
    r = L - count
    if r < 0 then r = 0 end
    if count > 0 then
      rs = ending
      nx = ending
    end
  else
    -- slidingWindow
    local prev, curr = 0, 0
    if t == k then
      prev, curr = x, y
    elseif t == k - 1 then
      prev = y
    end
    local avail = L - curr
    if prev > 0 then
      -- mulDivCeil(prev, W - e, W), plain when the product is below 2^52
      -- (then it is exact).
      local q = prev * (W - e)
      if q < T52 then
        local rr = q % W
        if rr < 0 then rr = rr + W elseif rr >= W then rr = rr - W end
        avail = avail - (q - rr) / W
        if rr > 0 then avail = avail - 1 end
      else
        numInit()
        avail = avail - mulDivCeil(prev, W - e, W)
      end
    end
    if avail >= n then
      allowed = true
      if consume then
        curr = curr + n
        avail = avail - n
        s1, s2, s3 = k, prev, curr
      end
    else
      ra = slidingWait(W, L, prev, curr, e, n)
    end
    r = avail
    if r < 0 then r = 0 end
    if curr > 0 then
      rs = 2 * W - e
    elseif prev > 0 then
      rs = W - e
    end
    if r < L then nx = slidingWait(W, L, prev, curr, e, r + 1) end
  end
  if off > 0 then -- later
    if not allowed then ra = ra + off end
    if rs > 0 then rs = rs + off end
    if nx > 0 then nx = nx + off end
  end
  if allowed then
    return true, 2 * r + 1, 0, rs, nx, s1, s2, s3, t == s1 and (kind == 1 or y > 0)
  end
  return false, 2 * r, ra, rs, nx
end

local function bucketFast(kind, p, v, key, consume)
  local L, W, C, n = p[2], p[3], p[4], p[7]
  -- loadBucket: F relative to t (rel, unless far), or an empty bucket.
  local t, x = 0, 0
  if v then
    local s, ns, rx
    local m = memo[key]
    if m and m[1] == v then
      s, ns, rx = m[2], m[3], m[4]
    else
      s, ns, rx = match(v, '^(%-?%d+) (%d+) (%d+)$')
      if not s then
        local h = reservedState(v)
        if h then s, ns, rx = match(h, '^(%-?%d+) (%d+) (%d+)$') end
        if not s then foreign(key) end
      end
      s, ns, rx = tonumber(s), tonumber(ns), tonumber(rx)
      if ns >= G or rx >= L then foreign(key) end -- as loadBucket
    end
    local d = s - TS
    if d <= 2000000 and d >= -2000000 then t, x = d * G + (ns - TN), rx end
  end
  local allowed, r, ra, rs, nx, delay = false, 0, 0, 0, 0, 0
  local s1, s2
  if kind == 7 then
    -- leakyQueue (cell.lua) on the wide-value helpers, which stay plain
    -- numbers while they can.
    numInit()
    local ml = bmul(p[6], L) -- MaxDelay*L
    local dlw = deficitOf(t, x, L)
    if bcmp(dlw, ml) > 0 then
      ra = queueWait(ml, W, L, dlw, 1)
    else
      allowed = true
      if consume then
        delay = bdivceil(dlw, L)
        local ct, rr = advanceBy(t, x, L, bdivmod(bmul(n, W), L))
        s1, s2 = ct, rr
        dlw = deficitOf(ct, rr, L)
      end
    end
    r = queueAvail(ml, W, dlw)
    rs = bdivceil(dlw, L)
    if r < C then nx = queueWait(ml, W, L, dlw, r + 1) end
  else
    local CW, dl, owed = C * W, 0, t > 0 or (t == 0 and x > 0)
    if owed then dl = t * L + x end
    if CW < T52 and dl < T52 then
      -- tokenFast (cell.lua): C*W and D*L are below 2^52.
      allowed = dl <= (C - n) * W
      if allowed and consume then
        -- advanceBy(t, x, L, divmod(n * W, L))
        local nw = n * W
        local rr = nw % L
        if rr < 0 then rr = rr + L elseif rr >= L then rr = rr - L end
        local ct = (nw - rr) / L
        if owed then ct, rr = ct + t, rr + x end
        if rr >= L then ct, rr = ct + 1, rr - L end
        s1, s2 = ct, rr
        dl = ct * L + rr
      elseif not allowed then
        ra = bucketWaitPlain(C, W, L, dl, n)
      end
      -- C - ceilDiv(dl, W) units are left when dl < C*W.
      if dl < CW then
        local rr = dl % W
        if rr < 0 then rr = rr + W elseif rr >= W then rr = rr - W end
        r = C - (dl - rr) / W
        if rr > 0 then r = r - 1 end
      end
      -- ceilDiv(dl, L)
      local rr = dl % L
      if rr < 0 then rr = rr + L elseif rr >= L then rr = rr - L end
      rs = (dl - rr) / L
      if rr > 0 then rs = rs + 1 end
      if r < C then
        -- bucketWaitPlain(C, W, L, dl, r + 1)
        local room = (C - r - 1) * W
        if room < dl then
          local d = dl - room
          rr = d % L
          if rr < 0 then rr = rr + L elseif rr >= L then rr = rr - L end
          nx = (d - rr) / L
          if rr > 0 then nx = nx + 1 end
        end
      end
    else
      -- tokenBucket (cell.lua) on wide values.
      numInit()
      local dlw = deficitOf(t, x, L)
      allowed = bcmp(bmul(C - n, W), dlw) >= 0
      if allowed and consume then
        local ct, rr = advanceBy(t, x, L, bdivmod(bmul(n, W), L))
        s1, s2 = ct, rr
        dlw = deficitOf(ct, rr, L)
      elseif not allowed then
        ra = bucketWait(C, W, L, dlw, n)
      end
      if bcmp(dlw, bmul(C, W)) < 0 then r = C - bdivceil(dlw, W) end
      rs = bdivceil(dlw, L)
      if r < C then nx = bucketWait(C, W, L, dlw, r + 1) end
    end
  end
  if allowed then
    return true, 2 * r + 1, delay, rs, nx, s1, s2
  end
  return false, 2 * r, ra, rs, nx
end

-- writeFast writes an admitted check's new state (windowFast's or
-- bucketFast's s1, s2, s3) to key, with an expiry after rs (its ResetAfter) and at least
-- minTTL ms; with keep and same (a window kind rewritten in the window it
-- held), it keeps the key's expiry instead (see fast.lua).
local function writeFast(key, kind, s1, s2, s3, same, rs, keep, minTTL)
  local v
  if kind == 1 then
    s3 = 0
    v = format('%d %d', s1, s2)
  elseif kind == 3 then
    v = format('%d %d %d', s1, s2, s3)
  else
    -- absol(s1): the instant t + s1 as a pair.
    s3 = s2
    local a = TN + s1
    local r = a % G
    if r < 0 then r = r + G elseif r >= G then r = r - G end
    s1, s2 = TS + (a - r) / G, r
    v = format('%d %d %d', s1, s2, s3)
  end
  if memoOn then -- remember v's numbers
    local m = memo[key]
    if m then
      m[1], m[2], m[3], m[4] = v, s1, s2, s3
    else
      if nmemo >= memoCap then memo, nmemo = {}, 0 end
      memo[key] = {v, s1, s2, s3}
      nmemo = nmemo + 1
    end
  end
  if keep and same then
    call('SET', key, v, 'KEEPTTL')
  else
    -- ceil(rs/10^6) + 1 ms, at least minTTL (rs >= 0: % is exact):
    -- Redis counts it from its clock's current millisecond, up to 1 ms
    -- before t, and the key must outlive t + rs (doc.go).
    local sub = rs % 1000000
    local ms = (rs - sub) / 1000000 + 1
    if sub > 0 then ms = ms + 1 end
    if ms < minTTL then ms = minTTL end
    call('SET', key, v, 'PX', TTLS[ms] or ttlArg(ms))
  end
end
