-- cluster.lua: undoing a reservation, for a Take whose checks span several
-- Redis Cluster slots (see doc.go, "Cluster"). A reservation (mode 1) is a
-- normal decision that also returns, for every key it wrote, what undoing
-- the write needs; undo (mode 2) then takes the reservation's units back.
--
-- The counting kinds are additive, so their undo subtracts exactly the
-- units the reservation added, whatever other requests did since:
--   "f" fixed_window:   a = window index, b = units
--   "w" sliding_window: a = window index, b = units
--   "l" sliding_log:    a, b = the instant (s, ns), c = units, d = the
--       events trimmed, with the state written (logWritten), or ""
--   "b" sliding_buckets: a = old value ("" when absent), b = new value,
--       c = the sub-window and Buckets "w b B", d = units
-- Undone, though, a reservation is a denied Take, which forgets no event
-- of a log and rolls no ring (algorithms' "Time that goes back"): a
-- request decided at an earlier instant still counts what left the
-- reservation's window. So when no request was counted in the key since
-- (its newest log item, or its ring's sub-window and that sub-window's
-- count, are as the reservation left them: a give-back or another undo
-- may have written it, which forget nothing), the undo first puts back
-- what the write forgot: a log's trimmed events (then its units are
-- subtracted), the slots of the sub-windows the ring moved past as they
-- were. Otherwise (a request was counted since, and forgot as much if it
-- stands) it subtracts the units only. Left: a reservation counted since
-- that is undone after this one (overlapping cross-slot Takes of one key,
-- undone in the order they reserved) forgets what this one trimmed for
-- good. A reservation that stands has forgotten them,
-- as an admitted Take does: a log cannot keep them listed, since a later
-- give-back of its newest event would bring them back into the window.
-- The bucket kinds are not additive: an instant moves to max(F, t) +
-- n*W/L. Their undo restores the old value when the key still holds what
-- the reservation wrote. Otherwise it subtracts the reservation's n*W/L from
-- the current instant when that is exact: when max(F0, t) >= u, F0 being the
-- instant before the reservation, t the reservation's and u the undo's
-- (every request between them came at an instant s <= u, and the
-- reservation left the instant at max(F0, t) + n*W/L, so no request between
-- found the bucket full in the world without the reservation, and each
-- moved the instant by its own n*W/L in both worlds). Else the key keeps
-- the reservation's units, erring towards denying, never towards admitting.
-- A leaky_queue never subtracts: a request that queued behind the place
-- was told to wait for it, and moving the queue back would send the next
-- request at that request's instant, two at once (Refund keeps such a
-- place for the same reason); it keeps the place unless nothing changed:
--   "s" token_bucket, leaky_bucket, leaky_queue: a = old value ("" when
--   absent), b = new value, c = "q r L" (n*W/L = q + r/L ns), d = "q"
--   for leaky_queue
-- A record is 7 strings: tag, key, list key, a, b, c, d.

local undoKind_
local function undoKind()
  if undoKind_ then return undoKind_ end
  local function undoRecord(tag, key, lkey, a, b, c, d, out)
    out[#out + 1] = tag
    out[#out + 1] = key
    out[#out + 1] = lkey or ''
    out[#out + 1] = a or ''
    out[#out + 1] = b or ''
    out[#out + 1] = c or ''
    out[#out + 1] = d or ''
  end

  local function undoWindow(key, k, n, sliding)
    local v = call('GET', key)
    if not v then return end
    local sk, x, y = match(v, '^(%-?%d+) (%d+) ?(%d*)$')
    if not sk then return end
    sk, x, y = tonumber(sk), tonumber(x), tonumber(y) or 0
    if sk == k then
      if sliding then y = max(y - n, 0) else x = max(x - n, 0) end
    elseif sliding and sk == k + 1 then
      x = max(x - n, 0)
    else
      return -- the units have left the window
    end
    local out = fmt(sk) .. ' ' .. fmt(x)
    if sliding then out = out .. ' ' .. fmt(y) end
    call('SET', key, out, 'KEEPTTL')
  end

  -- ring parses a ring the store wrote ("w b sum" and "slot count"
  -- pairs) into {w, b, counts}, or nil.
  local function ring(v)
    local w, b, _, at = match(v, '^(%-?%d+) (%d+) (%d+)()')
    if not w then return nil end
    local counts = {}
    while at <= #v do
      local i, c, nxt = match(v, '^ (%d+) (%d+)()', at)
      if not i then return nil end
      counts[tonumber(i)], at = tonumber(c), nxt
    end
    return {w = tonumber(w), b = tonumber(b), counts = counts}
  end

  local function undoBuckets(key, old, new, at, n)
    local v = call('GET', key)
    if not v then return end
    if v == new then
      if old == '' then
        call('DEL', key)
      else
        call('SET', key, old, 'KEEPTTL')
      end
      return
    end
    local w, b, B = match(at, '^(%-?%d+) (%d+) (%d+)$')
    if not w then return end
    w, b, B = tonumber(w), tonumber(b), tonumber(B)
    local S = bucketsKind().load({jw = 0, jb = 0, B = B}, key)
    local O, N = ring(old), ring(new)
    local moved = O and (w - O.w) * B + (b - O.b)
    if O and N and moved > 0 and S.w == w and S.b == b and S.counts[b] == N.counts[b] then
      -- The reservation moved the ring on, and it is still there, with
      -- its sub-window's count as it left it: no request was counted
      -- since (a give-back, another reservation's undo may have written
      -- it, which forget nothing). The slots of the sub-windows it moved
      -- past, the reservation's units in the last, get the old ring's
      -- counts back.
      for i = 1, math.min(moved, B) do
        local idx = (O.b + i) % B
        S.counts[idx] = O.counts[idx]
      end
      local sum = 0
      for _, c in pairs(S.counts) do sum = sum + c end
      S.w, S.b, S.sum = O.w, O.b, sum
      call('SET', key, bucketsKind().encode(S), 'KEEPTTL')
      return
    end
    local age = (S.w - w) * B + (S.b - b)
    if S.w - w > 2 or age < 0 or age >= B then return end
    local c = S.counts[b] or 0
    local take = math.min(c, n)
    S.counts[b] = c - take
    S.sum = S.sum - take
    call('SET', key, bucketsKind().encode(S), 'KEEPTTL')
  end

  -- logTrimmed returns the items the reservation's write of the log S is
  -- about to trim (the events its load pruned at the reservation's
  -- instant), oldest first, joined by ',', or nil when it trims none.
  local function logTrimmed(S)
    local k = math.min(S.head - 1, S.len)
    if k < 1 then return nil end
    return table.concat(call('LRANGE', S.lkey, 0, k - 1), ',')
  end

  -- logWritten returns the 'l' record's d once the reservation has written
  -- the log S, trimming the items trimmed: "T N;last;items", the total, the
  -- list's length and its last item as the write left them (a request
  -- that writes the log since changes one: a Take that counts the last
  -- item, a give-back or another undo the total), then the items; nil when
  -- none was trimmed.
  local function logWritten(S, trimmed)
    if not trimmed then return nil end
    return fmt(S.sum) .. ' ' .. fmt(call('LLEN', S.lkey)) .. ';' ..
      (call('LINDEX', S.lkey, -1) or '') .. ';' .. trimmed
  end

  -- restoreLog puts back the items a reservation trimmed, in front of the
  -- list, and their units in the total, when the log is as it left it.
  local function restoreLog(key, lkey, d)
    local total, len, last, items = match(d, '^(%d+) (%d+);([^;]*);(.+)$')
    -- The newest item as the write left it: no request was counted since
    -- (a give-back, another reservation's undo may have changed the total
    -- and the older items, which forget nothing).
    if not total or not call('GET', key) or call('LINDEX', lkey, -1) ~= last then
      return
    end
    local list, units, at = {}, 0, 1
    while at <= #items do
      local item, n, nxt = match(items, '^(%-?%d+ %d+ (%d+)),?()', at)
      if not item then return end
      list[#list + 1] = item
      units = units + tonumber(n)
      at = nxt
    end
    -- LPUSH puts each item in front in turn: the newest first, in chunks
    -- (unpack passes a bounded number of arguments).
    for hi = #list, 1, -1024 do
      local chunk = {}
      for k = hi, max(hi - 1023, 1), -1 do chunk[#chunk + 1] = list[k] end
      call('LPUSH', lkey, unpack(chunk))
    end
    call('INCRBY', key, units)
  end

  local function undoLog(key, lkey, s, ns, n, d)
    if d ~= '' then restoreLog(key, lkey, d) end
    local len = call('LLEN', lkey)
    local i = -1
    while -i <= len do
      local item = call('LINDEX', lkey, i)
      local es, ens, en = match(item or '', '^(%-?%d+) (%d+) (%d+)$')
      if not es then return end
      es, ens, en = tonumber(es), tonumber(ens), tonumber(en)
      if es < s or (es == s and ens < ns) then return end
      if es == s and ens == ns then
        local take = math.min(en, n)
        if en - take > 0 then
          call('LSET', lkey, i, fmt(es) .. ' ' .. fmt(ens) .. ' ' .. fmt(en - take))
        else
          call('LSET', lkey, i, 'x')
          call('LREM', lkey, 1, 'x')
        end
        local sum = tonumber(call('GET', key) or '')
        if sum then
          call('SET', key, fmt(max(sum - take, 0)), 'KEEPTTL')
        end
        return
      end
      i = i - 1
    end
  end

  -- instant parses a bucket state "s n x" into (F - t in ns, x), or nil.
  local function instant(v)
    local s, ns, x = match(v or '', '^(%-?%d+) (%d+) (%d+)$')
    if not s then return nil end
    s = tonumber(s)
    if far(s) then return nil end
    return rel(s, tonumber(ns)), tonumber(x)
  end

  -- undoBucket undoes a reservation of a bucket kind; u is the undo's
  -- instant relative to the reservation's (t = 0 in the script).
  local function undoBucket(key, old, new, inc, u, queue)
    local cur = call('GET', key)
    if not cur then return end
    if cur == new then
      if old == '' then
        call('DEL', key)
      else
        call('SET', key, old, 'KEEPTTL')
      end
      return
    end
    if queue then return end -- a request may be queued behind the place
    local f0 = instant(old)
    if not ((f0 and f0 >= u) or 0 >= u) then return end
    local ft, fx = instant(cur)
    local q, r, L = match(inc, '^(%d+) (%d+) (%d+)$')
    if not (ft and q) then return end
    ft, fx = ft - tonumber(q), fx - tonumber(r)
    if fx < 0 then
      fx = fx + tonumber(L)
      ft = ft - 1
    end
    local s, ns = absol(ft)
    call('SET', key, format('%d %d %d', s, ns, fx), 'KEEPTTL')
  end

  local function applyUndo(base)
    local clock, count = ARGV[base], tonumber(ARGV[base + 1])
    if not count or #ARGV ~= base + 1 + count * 7 then
      return redis.error_reply('redisstore: malformed undo records')
    end
    local u -- the undo's instant, in ns after the reservation's
    if clock == 'server' then
      local tm = call('TIME')
      u = rel(tonumber(tm[1]), tonumber(tm[2]) * 1000)
    else
      u = tonumber(clock) -- the injected clock's reading, sent
      if not u then
        return redis.error_reply('redisstore: malformed undo instant')
      end
    end
    base = base + 1
    for r = 0, count - 1 do
      local a = base + r * 7
      local tag, key, lkey = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
      local A, B, C, D = ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
      if tag == 's' then
        undoBucket(key, A, B, C, u, D == 'q')
      elseif tag == 'f' or tag == 'w' then
        undoWindow(key, tonumber(A), tonumber(B), tag == 'w')
      elseif tag == 'b' then
        undoBuckets(key, A, B, C, tonumber(D))
      elseif tag == 'l' then
        undoLog(key, lkey, tonumber(A), tonumber(B), tonumber(C), D)
      end
    end
    return nil
  end
  undoKind_ = {record = undoRecord, trimmed = logTrimmed, written = logWritten, apply = applyUndo}
  return undoKind_
end
