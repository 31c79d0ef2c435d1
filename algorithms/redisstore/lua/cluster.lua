-- cluster.lua: undoing a reservation, for a Take whose checks span several
-- Redis Cluster slots (see doc.go, "Cluster"). A reservation (mode 1) is a
-- normal decision that also returns, for every key it wrote, what undoing
-- the write needs; undo (mode 2) then takes the reservation's units back.
-- One that consumed keeps its reply at its marker (its last key), which a
-- call of it sent again answers (main.lua; its reply was lost).
--
-- Undone, a reservation is a denied Take: the key as if it had not been
-- made, the requests counted in it since as they were counted.
--
-- fixed_window, sliding_window, token_bucket, leaky_bucket, leaky_queue:
-- a reservation writes the key's state followed by a record of itself and
-- the value the key held, so a value holds the state and then the records
-- of the reservations not known to be over, newest first:
--   state "|" id "," life "," at "," inc "," old ("|" id "," ...)*
-- id: the reservation's; life: how many ms longer than old the write lives
-- ("p": old had no expiry; "" when the key was absent); at: the instant
-- it decided at ("k e" for the window kinds: the window it counted in
-- and the offset in it, 0 when a key ahead had it counted in a later
-- window than its instant's; "s ns" for the bucket kinds); inc: the units it counted (n; for
-- the bucket kinds "q r", n*W/L = q + r/L ns); old: the key's state before
-- it ("" when absent). Every other write (a Take, a give-back, a refund)
-- writes a state alone, and the kinds read only the state (fastlib.lua's
-- reservedState): a record says that no request was counted in the key
-- since the reservation, nor since those after it, whatever the state (a
-- Take and its give-back may leave the very string a reservation wrote:
-- TestClusterUndoWindowTakenAndGivenBackBetween), and the state is the
-- records' reservations counted, in order, on the oldest one's old. The
-- undo of the newest record gives the key its old back, with the old's
-- expiry (gone if that has passed): the reservation may have moved a
-- window key to a later window, which a denied Take does not, and set it
-- to live as long as that window matters (TestClusterUndoLeavesWindowAsBefore,
-- TestClusterUndoRestoresTheOldExpiry). The undo of one below newer ones
-- counts theirs again, each at its own instant as the kind counts it
-- (applyWindow, applyBucket), a window kind's in the window it was
-- decided in (admitted against that window's count, it stays counted
-- there: TestClusterUndoRecountsInTheDecidedWindow), on its old: overlapping reservations undone
-- in any order leave the key as before (TestClusterUndoWindowOverlapping,
-- TestClusterUndoBucketOverlapping). A leaky_queue keeps the place instead
-- when the reservation just above queued behind it: that one was told to
-- wait for it, and moving the queue back would send the next request with
-- it, two at once (Refund keeps such a place for the same reason); the
-- record stays, its id "z" (undone), and goes when the newer ones' do. A
-- reservation not among the records (a request was counted since, or its
-- record was dropped: past CHAINCAP a reservation drops the oldest) takes
-- its units back from the state, and from the records' olds, which count
-- them too, where that is exact:
--   "f" fixed_window:   a = the window its units are in, b = the units,
--       c = the Window (ns), d = "". Counts are additive, and an undo
--       counting it again counts it in a (above): the units come off the
--       window that counts them, if one still does
--       (TestClusterUndoWindowCountedAgainElsewhere).
--   "w" sliding_window: the same
--   "s" token_bucket, leaky_bucket, leaky_queue: a = the state before it
--       ("" when absent), b = the state it wrote, c = "q r L", d = "q" for
--       leaky_queue. The bucket kinds are not additive: an instant moves to
--       max(F, t) + n*W/L. n*W/L comes off the instant when the key holds
--       the state the reservation wrote (every request counted since was
--       given back: none is queued behind its place, and the key is left at
--       max(F0, t), F0 its instant before the reservation and t the
--       reservation's, which every instant after those requests' finds as
--       they left it in the world without the reservation), or, but for a
--       leaky_queue, when max(F0, t) >= u, u the undo's instant (every
--       request between them came at an instant s <= u, and the reservation
--       left the instant at max(F0, t) + n*W/L, so no request between found
--       the bucket full in the world without the reservation, and each
--       moved the instant by its own n*W/L in both worlds), less u for
--       token_bucket and leaky_bucket (see undoState). Else the key keeps
--       the reservation's units, erring towards denying, never towards
--       admitting.
-- Left: a request counted since at an earlier window (a clock behind) is
-- counted in the window the reservation moved a key to, which its undo
-- then keeps; a give-back since of a request counted before the
-- reservation writes the state alone, and a sliding_window the reservation
-- moved on a window stays there (the give-back took the units from the
-- previous window, which the old counted as its current one): a request at
-- an instant before that window (a clock behind) finds the key there.
--
-- sliding_log and sliding_buckets: the counts are additive, and the undo
-- subtracts exactly the units the reservation added, whatever other
-- requests did since:
--   "l" sliding_log:    a, b = the instant (s, ns), c = units, d = the
--       events trimmed, with the state written (logWritten), or ""
--   "b" sliding_buckets: a = old value ("" when absent), b = new value,
--       c = the sub-window and Buckets "w b B", d = units
-- A denied Take, though, forgets no event of a log and rolls no ring
-- (algorithms' "Time that goes back"): a
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
-- A record is 7 strings: tag, key, list key, a, b, c, d. The undo also
-- gets the reservation's id (main.lua), and both declare the side keys in
-- KEYS (cluster.go, sideKeysOf).

local undoKind_
local function undoKind()
  if undoKind_ then return undoKind_ end
  local CHAINCAP = 16 -- records in a window or bucket key (see above)
  local KEPT = 'z' -- the id of an undone leaky_queue place kept (undoState)
  local FARNS = 2251799813685248 -- 2^51 ns: mainlib.lua's FAR

  -- addLife returns the life of a record whose old was a write of life
  -- upper over a value of life lower: how much longer than that value it
  -- lives.
  local function addLife(upper, lower)
    local x, y = tonumber(upper), tonumber(lower)
    if x and y then return format('%d', x + y) end
    return lower
  end

  local function undoRecord(tag, key, lkey, a, b, c, d, out)
    out[#out + 1] = tag
    out[#out + 1] = key
    out[#out + 1] = lkey or ''
    out[#out + 1] = a or ''
    out[#out + 1] = b or ''
    out[#out + 1] = c or ''
    out[#out + 1] = d or ''
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

  -- The window and bucket kinds' records in their key ----------------------

  -- mark returns v, the state a reservation (id) of op's key K writes,
  -- followed by its record and the value K held, and appends the undo
  -- record to undo; n is the units it counted in K, ttl the expiry (ms)
  -- of the write.
  local function mark(op, v, n, id, ttl, undo)
    local P, key = op.P, op.key
    local old = call('GET', key)
    local life, oh, orest = '', '', ''
    if old then
      local p = call('PTTL', key)
      if p >= 0 then life = format('%d', ttl - p) else life = 'p' end
      oh, orest = match(old, '^([^|]*)(.*)$')
    end
    local at, inc
    if P.kind == 1 or P.kind == 3 then -- fixed_window, sliding_window
      local tag = 'f'
      if P.kind == 3 then tag = 'w' end
      undoRecord(tag, key, nil, fmt(op.nc.t), fmt(n), fmt(P.W), '', undo)
      -- Counted again (undoState), it counts in the window it was decided
      -- in, at its start when that is a later one than its instant's.
      local e = P.e
      if op.nc.t ~= P.k then e = 0 end
      at, inc = fmt(op.nc.t) .. ' ' .. fmt(e), fmt(n)
    else
      local q, r = bdivmod(bmul(n, P.W), P.L)
      local queue
      if P.kind == 7 then queue = 'q' end -- leaky_queue
      undoRecord('s', key, nil, oh, v, format('%d %d %d', q, r, P.L), queue, undo)
      at, inc = fmt(TS) .. ' ' .. fmt(TN), format('%d %d', q, r)
    end
    -- At most CHAINCAP records: the oldest go.
    local from, count = 0, 0
    while true do
      local i = string.find(orest, '|', from + 1, true)
      if not i then break end
      count = count + 1
      if count == CHAINCAP then
        orest = sub(orest, 1, i - 1)
        break
      end
      from = i
    end
    return v .. '|' .. id .. ',' .. life .. ',' .. at .. ',' .. inc .. ',' .. oh .. orest
  end

  -- chainOf splits a window or bucket key's value v into its state and its
  -- records, newest first ({id, life, at, inc, old}; none when v is a
  -- state alone), or the state and nil when a record is malformed.
  local function chainOf(v)
    local head, rest = match(v, '^([^|]*)(|.*)$')
    if not head then return v, {} end
    local es = {}
    for e in string.gmatch(rest, '|([^|]*)') do
      local id, life, at, inc, old = match(e, '^(%w+),([p%-%d]*),(%-?%d+ %d+),(%d+ ?%d*),([%-%d ]*)$')
      if not id then return head, nil end
      es[#es + 1] = {id = id, life = life, at = at, inc = inc, old = old}
    end
    return head, es
  end

  -- chainText returns records es[from ...] as a value holds them.
  local function chainText(es, from)
    local parts = {}
    for i = from, #es do
      local e = es[i]
      parts[#parts + 1] = '|' .. e.id .. ',' .. e.life .. ',' .. e.at .. ',' .. e.inc .. ',' .. e.old
    end
    return table.concat(parts)
  end

  -- applyWindow returns the state of a fixed_window (sliding_window when
  -- sliding) key of window W after a reservation decided at at ("k e")
  -- counted n in state S ("" for none), as the kind counts it (cell.lua,
  -- and mainlib.lua's load: a state ahead of the reservation's window is
  -- counted in at its own, one more than 2^51 ns ahead is none), or nil.
  local function applyWindow(sliding, W, S, at, n)
    local k, e = match(at, '^(%-?%d+) (%d+)$')
    k, e = tonumber(k), tonumber(e)
    local t, x, y = k - 2, 0, 0
    if S ~= '' then
      local sk, sx, sy = match(S, '^(%-?%d+) (%d+) ?(%d*)$')
      if not sk then return nil end
      t, x, y = tonumber(sk), tonumber(sx), tonumber(sy) or 0
    end
    if t > k then
      if t - k > floor(FARNS / W) + 1 or (t - k) * W - e > FARNS then
        t, x, y = k - 2, 0, 0
      else
        k = t
      end
    end
    if not sliding then
      if t ~= k then x = 0 end
      return format('%d %d', k, x + n)
    end
    if t == k then return format('%d %d %d', k, x, y + n) end
    if t == k - 1 then return format('%d %d %d', k, y, n) end
    return format('%d %d %d', k, 0, n)
  end

  -- bucketStart returns the instant a request at at ("s ns") on a bucket
  -- kind's state S ("" for none) moves on from, max(F, t) as loadBucket
  -- reads F (one far from t is t), as (s, ns, x), and whether it is F
  -- (the bucket not full, the queue not free, at at), or nil.
  local function bucketStart(S, at)
    local ts, tn = match(at, '^(%-?%d+) (%d+)$')
    ts, tn = tonumber(ts), tonumber(tn)
    if S == '' then return ts, tn, 0, false end
    local fs, fns, fx = match(S, '^(%-?%d+) (%d+) (%d+)$')
    if not fs then return nil end
    fs, fns, fx = tonumber(fs), tonumber(fns), tonumber(fx)
    if fs - ts <= 2000000 and (fs > ts or (fs == ts and (fns > tn or (fns == tn and fx > 0)))) then
      return fs, fns, fx, true
    end
    return ts, tn, 0, false
  end

  -- applyBucket returns the state of a bucket kind's key after a
  -- reservation at at counted inc ("q r": n*W/L = q + r/L ns) in state S:
  -- F = max(F, t) + n*W/L (cell.lua's advance), or nil.
  local function applyBucket(S, at, inc, L)
    local s, ns, x = bucketStart(S, at)
    local q, r = match(inc, '^(%d+) (%d+)$')
    if not (s and q) then return nil end
    x = x + tonumber(r)
    if x >= L then x, ns = x - L, ns + 1 end
    local qs, qn = divmod(tonumber(q), G)
    ns = ns + qn
    if ns >= G then ns, s = ns - G, s + 1 end
    return format('%d %d %d', s + qs, ns, x)
  end

  -- takeWindow returns state S with n units taken from window k, where
  -- it still counts it (the current one, or the previous of a
  -- sliding_window), else S.
  local function takeWindow(S, k, n, sliding)
    local sk, x, y = match(S, '^(%-?%d+) (%d+) ?(%d*)$')
    if not sk then return S end
    sk, x, y = tonumber(sk), tonumber(x), tonumber(y) or 0
    if sk == k then
      if sliding then y = max(y - n, 0) else x = max(x - n, 0) end
    elseif sliding and sk == k + 1 then
      x = max(x - n, 0)
    else
      return S -- the units have left the window
    end
    if sliding then return format('%d %d %d', sk, x, y) end
    return format('%d %d', sk, x)
  end

  -- instant parses a bucket state "s n x" into (F - t in ns, x), or nil.
  local function instant(v)
    local s, ns, x = match(v or '', '^(%-?%d+) (%d+) (%d+)$')
    if not s then return nil end
    s = tonumber(s)
    if far(s) then return nil end
    return rel(s, tonumber(ns)), tonumber(x)
  end

  -- undoState undoes reservation id's write of the fixed_window ('f'),
  -- sliding_window ('w') or bucket kind's ('s') key K, from its undo
  -- record (a, b, c, d) and K's records; u is the undo's instant relative
  -- to the reservation's (t = 0 in the script).
  -- noteUndo notes (notes.lua) an undo at t + u that moved a bucket's F
  -- (P its Spec) back by q + r/L ns to head.
  local function noteUndo(P, key, q, r, head, u, minTTL)
    if not P then return end
    local ft, fx = instant(head)
    if not ft then return end
    local gkey = key .. ':g'
    local nt = notes().load(P, gkey, u)
    notes().given(P, gkey, nt, badd(bmul(q, P.L), r), ft, fx, minTTL, u)
  end

  -- noteless reports whether the undo cannot write the note of K (a
  -- token_bucket or leaky_bucket key: P its Spec): its call did not
  -- declare the note key (cluster.go's undo leaves it out while K's slot
  -- migrates, Redis refusing a call of a key no node holds then). An undo
  -- that would note K fails instead, before it writes anything: the
  -- reservation stays consumed, erring towards denying.
  local function noteless(P, key)
    if not P then return false end
    local gkey = key .. ':g'
    for _, k in ipairs(KEYS) do
      if k == gkey then return false end
    end
    return true
  end
  local NOTELESS = 'redisstore: the undo must note a give-back, and its call names no note key (the slot migrating)'

  -- undoState returns an error reply, having written nothing, when it
  -- must note the undo and cannot (noteless); else nil.
  local function undoState(tag, key, a, b, c, d, u, id, P, minTTL)
    local v = call('GET', key)
    if not v then return end
    local head, es = chainOf(v)
    local pos
    for i, e in ipairs(es or {}) do
      if e.id == id then
        pos = i
        break
      end
    end
    -- c: the window W (ns) of a window kind's record, "q r L" of a
    -- bucket kind's.
    local W, L = tonumber(c), tonumber(match(c, ' (%d+)$'))
    if pos == 1 then
      -- The newest record: nothing was counted in K since. K as before,
      -- expiring when it would have (TestClusterUndoRestoresTheOldExpiry),
      -- and as before the leaky_queue places kept, undone, for it (below),
      -- whose records it leaves the newest.
      local i, span = 1, es[1].life
      while es[i + 1] and es[i + 1].id == KEPT do
        i = i + 1
        span = addLife(span, es[i].life)
      end
      local e = es[i]
      if e.old == '' then
        call('DEL', key)
        return
      end
      local old = e.old .. chainText(es, i + 1)
      if span == 'p' then
        call('SET', key, old)
        return
      end
      local left, life = call('PTTL', key), tonumber(span)
      if not life or left < 0 then
        call('SET', key, old, 'KEEPTTL')
      elseif left - life <= 0 then
        call('DEL', key) -- the old value would have expired by now
      else
        call('SET', key, old, 'PX', format('%d', left - life))
      end
      return
    end
    if pos and (W or L) then
      -- Newer reservations, not yet undone, counted on top of this one,
      -- and no request since: theirs are counted again, on K as before
      -- this one. A leaky_queue keeps the place if the one just above
      -- queued behind it (it was told to wait for it; see Refund): the
      -- record stays, as undone, until the newer ones' are undone.
      local up, behind = es[pos - 1], false
      if d == 'q' then
        local s0, _, _, after = bucketStart(up.old, up.at)
        behind = not s0 or after
      end
      if not behind then
        local S = es[pos].old
        up.life = addLife(up.life, es[pos].life)
        for q = pos - 1, 1, -1 do
          es[q].old = S
          if tag == 's' then
            S = applyBucket(S, es[q].at, es[q].inc, L)
          else
            S = applyWindow(tag == 'w', W, S, es[q].at, tonumber(es[q].inc))
          end
          if not S then return end -- not a record the store wrote
        end
        head = S
        table.remove(es, pos)
        if tag == 's' and d ~= 'q' then
          local q, r = match(c, '^(%d+) (%d+) %d+$')
          if q then
            if noteless(P, key) then return redis.error_reply(NOTELESS) end
            noteUndo(P, key, tonumber(q), tonumber(r), head, u, minTTL)
          end
        end
      else
        es[pos].id = KEPT
      end
      call('SET', key, head .. chainText(es, 1), 'KEEPTTL')
      return
    end
    -- Not among K's records: a request was counted in K since (or the
    -- record was dropped, past CHAINCAP), the reservations in K's records
    -- after it. The counting kinds take its units back from K's state and
    -- the reservations' olds, in the window that counts them.
    local rest = sub(v, #head + 1)
    if tag == 'f' or tag == 'w' then
      local k, n, sliding = tonumber(a), tonumber(b), tag == 'w'
      if not (k and n) then return end
      head = takeWindow(head, k, n, sliding)
      if es then
        for _, e in ipairs(es) do
          if e.old ~= '' then e.old = takeWindow(e.old, k, n, sliding) end
        end
        rest = chainText(es, 1)
      end
      call('SET', key, head .. rest, 'KEEPTTL')
      return
    end
    -- A bucket kind's: n*W/L off the instant when that is exact (why:
    -- "s" above): K holds the state the reservation wrote (b), or, but
    -- for a leaky_queue (a request may queue behind the place),
    -- max(F0, t) >= u. Less u for token_bucket and leaky_bucket: an undo
    -- below it may have moved K below a
    -- (TestClusterUndoBucketRecountedBelow; doc.go).
    local f0 = instant(a)
    if head ~= b and (d == 'q' or not ((f0 and f0 >= u) or 0 >= u)) then return end
    local q, r = match(c, '^(%d+) (%d+) %d+$')
    if not (q and L) then return end
    q, r = tonumber(q), tonumber(r)
    if d ~= 'q' and u > 0 then
      if u > q or (u == q and r == 0) then return end
      q = q - u
    end
    -- The olds of K's records too: each counts the units (see above).
    local function back(S)
      local ft, fx = instant(S)
      if not ft then return S end
      ft, fx = ft - q, fx - r
      if fx < 0 then
        fx = fx + L
        ft = ft - 1
      end
      local s, ns = absol(ft)
      return format('%d %d %d', s, ns, fx)
    end
    head = back(head)
    if es then
      for _, e in ipairs(es) do
        if e.old ~= '' then e.old = back(e.old) end
      end
      rest = chainText(es, 1)
    end
    if d ~= 'q' and noteless(P, key) then return redis.error_reply(NOTELESS) end
    call('SET', key, head .. rest, 'KEEPTTL')
    if d ~= 'q' then noteUndo(P, key, q, r, head, u, minTTL) end
  end

  -- applyUndo applies the undo records ARGV[base + 3 ...] of reservation
  -- ARGV[base + 1] (its id), at instant ARGV[base].
  local function applyUndo(base, minTTL)
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
    -- The buckets' Specs, by key (noteUndo).
    local specs, ki = {}, 1
    for i = 1, tonumber(ARGV[5]) or 0 do
      local x = 5 + (i - 1) * 7
      local kind = tonumber(ARGV[x + 1]) -- 2 LOG, 5 TOKEN, 6 LEAKY
      if (kind == 5 or kind == 6) and KEYS[ki] then
        specs[KEYS[ki]] = {L = tonumber(ARGV[x + 2]), W = tonumber(ARGV[x + 3]), C = tonumber(ARGV[x + 4])}
      end
      ki = ki + 1
      if kind == 2 then ki = ki + 1 end
    end
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
      if tag == 's' or tag == 'f' or tag == 'w' then
        local err = undoState(tag, key, A, B, C, D, u, id, specs[key], minTTL)
        if err then return err end
      elseif tag == 'b' then
        undoBuckets(key, A, B, C, tonumber(D), sides[key], id)
      elseif tag == 'l' then
        undoLog(key, lkey, tonumber(A), tonumber(B), tonumber(C), D, sides[key], id)
      end
    end
    return nil
  end
  undoKind_ = {record = undoRecord, trimmed = logTrimmed, written = logWritten, apply = applyUndo,
    open = sideOpen, push = sidePush, mark = mark}
  return undoKind_
end
