-- cluster.lua: undoing a reservation, for a Take whose checks span several
-- Redis Cluster slots (see doc.go, "Cluster"). A reservation (mode 1) is a
-- normal decision that also returns, for every key it wrote, what undoing
-- the write needs; undo (mode 2) then takes the reservation's units back.
--
-- The counting kinds are additive, so their undo subtracts exactly the
-- units the reservation added, whatever other requests did since:
--   "f" fixed_window:   a = window index, b = "units life", c = old value
--       ("" when absent), d = new value; life: how many ms longer than the
--       old value the new one was set to live ("p": the old had no
--       expiry; "" when absent)
--   "w" sliding_window: the same
-- A window key that still holds what the reservation wrote gets its old
-- value back instead, with the old value's expiry (gone if that has
-- passed): the reservation may have moved it to a later window, which a
-- denied Take does not (see below), and set it to live as long as that
-- window matters; one written since keeps that window (as a log or ring a
-- request counted in since).
--   "l" sliding_log:    a, b = the instant (s, ns), c = units, d = the
--       events trimmed, with the state written (logWritten), or ""
--   "b" sliding_buckets: a = old value ("" when absent), b = new value,
--       c = the sub-window and Buckets "w b B", d = units
-- Undone, though, a reservation is a denied Take, which forgets no event
-- of a log and rolls no ring (algorithms' "Time that goes back"): a
-- request decided at an earlier instant still counts what left the
-- reservation's window. What the write forgot (a log's trimmed events,
-- the ring slots it moved past) comes back when no request was counted
-- in the key since (a give-back or an undo forgets nothing); a request
-- counted since forgot as much, if it stands. So that overlapping
-- cross-slot Takes of a key lose nothing, each reservation of a
-- sliding_log or sliding_buckets key goes on top of the key's side key
-- (below), with the key's fingerprint (newest log item; ring sub-window
-- and its count), which undos keep and a counted request changes. The
-- undo of the top one, the fingerprint as left, puts back what it forgot
-- and what was handed to it; of one below, hands both to the one just
-- above (if that one stands, they stay forgotten, as the Model forgets
-- them at its admitted Take); with the fingerprint changed, drops all.
-- A give-back changes it only taking units counted at the newest instant
-- (sub-window): by a request counted since the newest reservation, or
-- before it, when the reservations on the stack, at that instant too,
-- forgot nothing. Left: past SIDECAP overlapping reservations the oldest
-- is dropped (what it forgot may stay forgotten); a request counted since
-- and given back before the undo reads as none (erring towards denying).
-- A reservation that stands has forgotten them, as an admitted Take does:
-- a log cannot keep them listed, since a later give-back of its newest
-- event would bring them back into the window.
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
-- A record is 7 strings: tag, key, list key, a, b, c, d. The undo also
-- gets the reservation's id (main.lua), and both declare the side keys in
-- KEYS (cluster.go, sideKeysOf).

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

  local function undoWindow(key, k, units, sliding, old, new)
    local v = call('GET', key)
    if not v then return end
    local n, life = match(units or '', '^(%d+) ?(%-?[%dp]*)$')
    if not n then return end
    n = tonumber(n)
    if new ~= '' and v == new then
      -- Nothing written since: the key as before, in the window it was
      -- in (a denied Take moves no key to a later window, where a
      -- request at an earlier instant would be decided, its units
      -- forgotten: TestClusterUndoLeavesWindowAsBefore), expiring when
      -- it would have (TestClusterUndoRestoresTheOldExpiry).
      if old == '' then
        call('DEL', key)
      elseif life == 'p' then
        call('SET', key, old)
      else
        local left = call('PTTL', key)
        local d = tonumber(life)
        if not d or left < 0 then
          call('SET', key, old, 'KEEPTTL')
        elseif left - d <= 0 then
          call('DEL', key) -- the old value would have expired by now
        else
          call('SET', key, old, 'PX', format('%d', left - d))
        end
      end
      return
    end
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

  -- K's side key K:u holds K's reservations not known to be over, oldest
  -- first: fp "\n" id "/" data ("\n" id "/" data)*. fp: K's fingerprint
  -- (sideFp) as the newest one's write and the undos since left it. data:
  -- what undone ones below forgot, oldest first, joined by ',': trimmed
  -- events "s ns n", or ring moves "w b:<the ring before the move>".
  local SIDECAP = 32

  local function sideName(key) return key .. ':u' end

  -- sideFp: the log's newest item, or the ring's sub-window and count.
  local function sideFp(key, lkey)
    if lkey ~= '' then return call('LINDEX', lkey, -1) or '' end
    local R = ring(call('GET', key) or '')
    if not R then return '' end
    return fmt(R.w) .. ' ' .. fmt(R.b) .. ' ' .. fmt(R.counts[R.b] or 0)
  end

  -- sideLoad returns the stack {fp, ids, data} at P, or nil; a value
  -- sideSave did not write fails the call (before it writes anything).
  local function sideLoad(P)
    local v = redis.pcall('GET', P)
    if type(v) == 'table' then foreign(P) end
    if not v then return nil end
    local fp, rest = match(v, '^([^\n]*)(.*)$')
    local st = {fp = fp, ids = {}, data = {}}
    for line in string.gmatch(rest, '\n([^\n]*)') do
      local id, d = match(line, '^(%x+)/(.*)$')
      if not id then foreign(P) end
      st.ids[#st.ids + 1], st.data[#st.data + 1] = id, d
    end
    if #st.ids == 0 or #st.ids > SIDECAP then foreign(P) end
    return st
  end

  -- sideSave writes st at P (DEL when empty), with expiry ttl or kept.
  local function sideSave(P, st, ttl)
    if #st.ids == 0 then
      call('DEL', P)
      return
    end
    local parts = {st.fp}
    for i, id in ipairs(st.ids) do parts[#parts + 1] = id .. '/' .. st.data[i] end
    if ttl then
      call('SET', P, table.concat(parts, '\n'), 'PX', ttlArg(ttl))
    else
      call('SET', P, table.concat(parts, '\n'), 'KEEPTTL')
    end
  end

  local function joined(a, b)
    if a == '' then return b end
    if b == '' then return a end
    return a .. ',' .. b
  end

  -- sideOpen, before a reservation writes: K's stack, dropped when a
  -- request was counted since its newest reservation (it forgot it all).
  local function sideOpen(key, lkey)
    local sd = {P = sideName(key), key = key, lkey = lkey or ''}
    local st = sideLoad(sd.P)
    if not st or st.fp ~= sideFp(key, sd.lkey) then
      st = {ids = {}, data = {}}
    end
    sd.st = st
    return sd
  end

  -- sidePush, once reservation id wrote K: on top; expires with K (ttl).
  local function sidePush(sd, id, ttl)
    local st = sd.st
    st.ids[#st.ids + 1], st.data[#st.data + 1] = id, ''
    if #st.ids > SIDECAP then
      table.remove(st.ids, 1)
      table.remove(st.data, 1)
    end
    st.fp = sideFp(sd.key, sd.lkey)
    sideSave(sd.P, st, ttl)
  end

  -- sideUndo tells the undo of reservation id (sd: K's side state, or
  -- nil), which forgot own, what to do: 'restore', data (it is the newest
  -- and nothing was counted since: put back what was handed to it and
  -- own); 'hand' (a newer one counted since: both go to the one just
  -- above); 'drop' (a request counted since the newest: all is gone);
  -- 'old' (not in the stack: as without side keys). Then it subtracts.
  local function sideUndo(sd, id, own)
    local st = sd and sd.st
    if not st then return 'old' end
    if st.fp ~= sideFp(sd.key, sd.lkey) then
      sd.st = nil
      call('DEL', sd.P)
      return 'drop'
    end
    local pos
    for i, x in ipairs(st.ids) do
      if x == id then pos = i end
    end
    if not pos then return 'old' end
    local data = joined(st.data[pos], own)
    table.remove(st.ids, pos)
    table.remove(st.data, pos)
    if pos > #st.ids then return 'restore', data end
    st.data[pos] = joined(data, st.data[pos])
    return 'hand'
  end

  -- sideClose, once the undo wrote K: the fingerprint as it left it.
  local function sideClose(sd)
    if not (sd and sd.st) then return end
    sd.st.fp = sideFp(sd.key, sd.lkey)
    sideSave(sd.P, sd.st, nil)
  end

  -- ringBack undoes a ring move "w b:<ring before>": the slots it passed
  -- up to (w, b) get their counts back, and the ring its sub-window.
  local function ringBack(S, move, B)
    local w, b, old = match(move, '^(%-?%d+) (%d+):(.+)$')
    local O = old and ring(old)
    if not O then return end
    local moved = (tonumber(w) - O.w) * B + (tonumber(b) - O.b)
    for i = 1, math.min(moved, B) do
      local idx = (O.b + i) % B
      S.counts[idx] = O.counts[idx]
    end
    S.w, S.b = O.w, O.b
  end

  local function undoBuckets(key, old, new, at, n, sd, id)
    local w, b, B = match(at, '^(%-?%d+) (%d+) (%d+)$')
    if not w then return end
    w, b, B = tonumber(w), tonumber(b), tonumber(B)
    local O = ring(old)
    local own = ''
    if O and (w - O.w) * B + (b - O.b) > 0 then
      own = fmt(w) .. ' ' .. fmt(b) .. ':' .. old
    end
    local how, data = sideUndo(sd, id, own)
    local v = call('GET', key)
    if not v then
      sideClose(sd)
      return
    end
    if v == new and (how == 'old' or (how == 'restore' and data == own)) then
      -- Nothing written since: the old ring, exactly.
      if old == '' then
        call('DEL', key)
      else
        call('SET', key, old, 'KEEPTTL')
      end
      sideClose(sd)
      return
    end
    local S = bucketsKind().load({jw = 0, jb = 0, B = B}, key)
    local N = ring(new)
    local back = how == 'restore' and data ~= ''
    if how == 'old' then
      -- The ring is where the reservation moved it, with its count: no
      -- request was counted since.
      back = own ~= '' and N and S.w == w and S.b == b and S.counts[b] == N.counts[b]
      data = own
    end
    if not (back and own ~= '') then
      -- The units back, while in the ring (else its own move does it).
      local age = (S.w - w) * B + (S.b - b)
      if S.w - w <= 2 and age >= 0 and age < B then
        local c = S.counts[b] or 0
        local take = math.min(c, n)
        S.counts[b] = c - take
        S.sum = S.sum - take
      end
    end
    if back then
      -- The moves back, newest first.
      local moves = {}
      for m in string.gmatch(data, '[^,]+') do moves[#moves + 1] = m end
      for i = #moves, 1, -1 do ringBack(S, moves[i], B) end
      local sum = 0
      for _, c in pairs(S.counts) do sum = sum + c end
      S.sum = sum
    end
    call('SET', key, bucketsKind().encode(S), 'KEEPTTL')
    sideClose(sd)
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

  -- ownItems returns the newest item a reservation's write left in the
  -- log and the items it trimmed, from the 'l' record's d (see
  -- logWritten), or nil.
  local function ownItems(d)
    local total, _, last, items = match(d, '^(%d+) (%d+);([^;]*);(.+)$')
    if not total then return nil end
    return last, items
  end

  -- pushItems puts items (events "s ns n" joined by ',', oldest first)
  -- back in front of the list, and their units in the total.
  local function pushItems(key, lkey, items)
    if items == '' or not call('GET', key) then return end
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

  local function undoLog(key, lkey, s, ns, n, d, sd, id)
    local last, own = ownItems(d)
    local how, data = sideUndo(sd, id, own or '')
    if how == 'restore' then
      pushItems(key, lkey, data)
    elseif how == 'old' and own and call('GET', key) and call('LINDEX', lkey, -1) == last then
      -- The newest item as the write left it: nothing counted since.
      pushItems(key, lkey, own)
    end
    local len = call('LLEN', lkey)
    local i = -1
    while -i <= len do
      local item = call('LINDEX', lkey, i)
      local es, ens, en = match(item or '', '^(%-?%d+) (%d+) (%d+)$')
      if not es then break end
      es, ens, en = tonumber(es), tonumber(ens), tonumber(en)
      if es < s or (es == s and ens < ns) then break end
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
        break
      end
      i = i - 1
    end
    sideClose(sd)
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

  -- applyUndo applies the undo records ARGV[base + 3 ...] of reservation
  -- ARGV[base + 1] (its id), at instant ARGV[base].
  local function applyUndo(base)
    local clock, id, count = ARGV[base], ARGV[base + 1], tonumber(ARGV[base + 2])
    if not count or not match(id or '', '^%x+$') or #ARGV ~= base + 2 + count * 7 then
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
    base = base + 2
    -- Every side key first: one the store did not write fails the undo
    -- before it writes anything.
    local sides = {}
    for r = 0, count - 1 do
      local a = base + r * 7
      local tag, key, lkey = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
      if tag == 'l' or tag == 'b' then
        if tag == 'b' then lkey = '' end
        local P = sideName(key)
        local st = sideLoad(P)
        if st then sides[key] = {P = P, key = key, lkey = lkey, st = st} end
      end
    end
    for r = 0, count - 1 do
      local a = base + r * 7
      local tag, key, lkey = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
      local A, B, C, D = ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
      if tag == 's' then
        undoBucket(key, A, B, C, u, D == 'q')
      elseif tag == 'f' or tag == 'w' then
        undoWindow(key, tonumber(A), B, tag == 'w', C, D)
      elseif tag == 'b' then
        undoBuckets(key, A, B, C, tonumber(D), sides[key], id)
      elseif tag == 'l' then
        undoLog(key, lkey, tonumber(A), tonumber(B), tonumber(C), D, sides[key], id)
      end
    end
    return nil
  end
  undoKind_ = {record = undoRecord, trimmed = logTrimmed, written = logWritten, apply = applyUndo,
    open = sideOpen, push = sidePush}
  return undoKind_
end
