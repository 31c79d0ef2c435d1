-- main.lua: decides every check of one Take, then writes only if all are
-- allowed. Mirrors algorithms/memory.go takeMany (repeated keys follow the
-- earlier check's state, as if it had been admitted: mainlib.lua's follow
-- and decide; when the Take is denied, the checks that would
-- pass are decided again, without consuming, on their key's state as loaded).
--
-- ARGV: 1 TS ("" to read the server's TIME), 2 TN, 3 minimum TTL in ms,
--       4 mode (0 normal, 1 reserve, 2 undo, 3 peek: see cluster.lua;
--       4 refund: see refund.lua; 5 give back: see giveback.lua; 6 peek
--       each check alone, writing nothing: Store.Peek),
--       5 number of checks, then 7 per check: kind, L, W (ns), C (capacity),
--       Buckets, MaxDelay (ns), cost; L is the limit the check is judged
--       at (algorithms.Check.Limit: below the Spec's, or for fixed_window,
--       sliding_window and sliding_buckets above it, up to MaxLimit;
--       keys.go's specInfo) and C the Spec's capacity, which a window
--       kind never judges with nor bounds its counts by (they hold up to
--       MAXCOUNT, num.lua: what a check judged at MaxLimit admits);
--       a reservation (mode 1) then its id and its marker's lifetime (ms;
--       0 for none),
--       an undo (mode 2) its instant, the reservation's id and its undo
--       records (see cluster.lua).
-- KEYS: one per check (two for sliding_log: the total, then the list); a
--       reservation and an undo then declare the side key (":u") of each
--       sliding_log and sliding_buckets key they may write, a reservation
--       then its marker (none when its lifetime is 0: then only the
--       checks' keys).
-- Reply: 4 integers per check: 2*Remaining + allowed (0/1), then Delay
--        when allowed or RetryAfter when denied (the other is 0), ResetAfter,
--        NextAfter (ns); a give-back (mode 5) then one given flag (0/1) per
--        check. (Redis converts each integer of a reply on its own: four
--        cost a check less than six.)

numInit()
if fastTime then
  -- fast.lua read the instant and gave up: decide at that instant.
elseif ARGV[1] == '' then
  local tm = call('TIME')
  TS = tonumber(tm[1])
  TN = tonumber(tm[2]) * 1000
else
  TS = tonumber(ARGV[1])
  TN = tonumber(ARGV[2])
end
local minTTL = tonumber(ARGV[3])
local mode = tonumber(ARGV[4])
local nchecks = tonumber(ARGV[5])
if not (TS and TN and minTTL and mode and nchecks) then
  return redis.error_reply('redisstore: malformed arguments')
end

-- The general path's helpers are mainlib.lua's; windows is per call.
windows = {}

if mode == 4 then
  return refundQueues(nchecks, minTTL)
end

-- A give-back (mode 5) gives back, then reports as a peek.
local given
if mode == 5 then
  local err
  given, err = giveBack(nchecks, minTTL)
  if not given then return err end
  mode = 3
end

if mode == 2 then
  local err = undoKind().apply(5 + nchecks * 7 + 1, minTTL)
  if err then return err end
end

-- A reservation's id (mode 1): its undo names it (see cluster.lua).
local rid, rpx
if mode == 1 then
  rid = ARGV[5 + nchecks * 7 + 1]
  rpx = ARGV[5 + nchecks * 7 + 2]
  if not (rid and match(rid, '^%x+$') and rpx and (rpx == '0' or match(rpx, '^[1-9]%d?%d?%d?%d?$'))) then
    return redis.error_reply('redisstore: malformed reservation id or marker lifetime')
  end
  -- Sent again, its reply lost after it ran: that reply (cluster.go).
  -- A lifetime of 0: no marker (a slot migrating, see cluster.go's
  -- reserveAs), KEYS the checks' own.
  if rpx ~= '0' then
    local was = call('GET', KEYS[#KEYS])
    if was then return cmsgpack.unpack(was) end
  end
end

-- A peek of each check alone (mode 6) loads and decides every check on
-- its own, without consuming, and writes nothing (neither does a denied
-- Take: a rebuilt sliding_log total aside).
local alone = mode == 6

local ops, byKey = {}, {}
local all = true
local ki = 1
for i = 1, nchecks do
  local a = 5 + (i - 1) * 7
  local P = {
    kind = tonumber(ARGV[a + 1]), L = tonumber(ARGV[a + 2]), W = tonumber(ARGV[a + 3]),
    C = tonumber(ARGV[a + 4]), B = tonumber(ARGV[a + 5]), md = tonumber(ARGV[a + 6]),
  }
  local n = tonumber(ARGV[a + 7])
  if not (P.kind and P.L and P.W and P.C and P.B and P.md and n) then
    return redis.error_reply('redisstore: malformed check ' .. i)
  end
  local op = {P = P, n = n, key = KEYS[ki]}
  ki = ki + 1
  if P.kind == LOG then
    op.lkey = KEYS[ki]
    ki = ki + 1
  end
  if P.kind == FIXED or P.kind == SLIDING then
    P.k, P.e = windowOf(P.W)
  elseif P.kind == BUCKETS then
    P.sub = P.W / P.B
    P.jw, P.ew = windowOf(P.W)
    P.jb, P.es = divmod(P.ew, P.sub)
  end
  local prev = byKey[op.key]
  if prev and not alone then
    op.dup = prev
    follow(op, ops[prev])
  else
    op.ro = alone
    load(op)
  end
  byKey[op.key] = i
  ops[i] = op
  decide(op, not alone)
  all = all and op.d.a
end

-- A peek, and an undone reservation, report the checks as decided
-- without consuming.
if mode == 2 or mode == 3 then all = false end

local undo = {}
if alone then
  -- Decided without consuming: nothing to write.
elseif not all then
  for i = 1, nchecks do
    local op = ops[i]
    if op.d.a then
      if op.dup then
        local r = ops[op.dup]
        while r.dup do r = ops[r.dup] end
        op.c, op.S, op.off = r.c, r.S, r.off
      end
      decide(op, false)
    end
  end
  -- Nothing is written: a denied Take (or a peek, mode 3) neither
  -- prunes a log nor rolls a ring, which would forget what a request
  -- decided at an earlier instant still counts, and move the instant such
  -- a request is decided at (algorithms' "Time that goes back").
else
  -- Commit: every check's consumption, in order, on its key's loaded
  -- state; then one write per key, expiring when its state stops mattering.
  local last, consumed = {}, {}
  for i = 1, nchecks do
    local op = ops[i]
    local root = op
    while root.dup do root = ops[root.dup] end
    consumed[op.key] = (consumed[op.key] or 0) + op.n
    if op.P.kind == LOG then
      logKind().commit(root.S, op.off, op.n)
    elseif op.P.kind == BUCKETS then
      bucketsKind().commit(root.S, op.n)
    end
    last[op.key] = op
  end
  -- A reservation reads the side key of each sliding_log and
  -- sliding_buckets key it writes first (see cluster.lua): one the store
  -- did not write fails the call before it writes anything.
  local sides
  if mode == 1 then
    sides = {}
    for i = 1, nchecks do
      local op = ops[i]
      if last[op.key] == op and (op.P.kind == LOG or op.P.kind == BUCKETS) then
        sides[op.key] = undoKind().open(op.key, op.lkey)
      end
    end
  end
  for i = 1, nchecks do
    local op = ops[i]
    if last[op.key] == op then
      -- ceil(rs/10^6) + 1 ms: see fastlib.lua's writeFast.
      local ttl = max(floor((op.d.rs + 999999) / 1000000) + 1, minTTL, 1)
      local kind = op.P.kind
      local root = op
      while root.dup do root = ops[root.dup] end
      if kind == LOG then
        local trimmed
        if mode == 1 then trimmed = undoKind().trimmed(root.S) end
        logKind().write(root.S, ttl)
        if mode == 1 then
          local s, ns = absol(op.off)
          undoKind().record('l', op.key, op.lkey, fmt(s), fmt(ns), fmt(consumed[op.key]),
            undoKind().written(root.S, trimmed), undo)
          undoKind().push(sides[op.key], rid, ttl)
        end
      else
        local v
        if kind == FIXED or kind == SLIDING then
          v = windowKinds().encode(op.P, op.nc)
        elseif kind == BUCKETS then
          v = bucketsKind().encode(root.S)
        else
          v = bucketKinds().encode(op.P, op.nc)
        end
        if mode == 1 then
          if kind == BUCKETS then
            undoKind().record('b', op.key, nil, call('GET', op.key) or '', v,
              fmt(root.S.w) .. ' ' .. fmt(root.S.b) .. ' ' .. fmt(op.P.B), fmt(consumed[op.key]), undo)
          else
            -- After the state, a record of this reservation and the value
            -- the key held, which its undo reads (cluster.lua, mark).
            v = undoKind().mark(op, v, consumed[op.key], rid, ttl, undo)
          end
        end
        call('SET', op.key, v, 'PX', ttlArg(ttl))
        if mode == 1 and kind == BUCKETS then undoKind().push(sides[op.key], rid, ttl) end
      end
    end
  end
end

local out = {}
for i = 1, nchecks do
  local d = ops[i].d
  local b = (i - 1) * 4
  if d.a then
    out[b + 1], out[b + 2] = 2 * d.r + 1, d.dl
  else
    out[b + 1], out[b + 2] = 2 * d.r, d.ra
  end
  out[b + 3], out[b + 4] = d.rs, d.nx
end
if given then
  for i = 1, nchecks do out[#out + 1] = given[i] and 1 or 0 end
end
if mode == 1 then
  -- The instant decided at, then the undo records.
  out[#out + 1] = TS
  out[#out + 1] = TN
  out[#out + 1] = #undo / 7
  for _, v in ipairs(undo) do out[#out + 1] = v end
  -- A denied one's too (cluster.go's runSplit), unless refused.
  if rpx ~= '0' then
    local set = all and call or redis.pcall
    set('SET', KEYS[#KEYS], cmsgpack.pack(out), 'PX', rpx)
  end
end
return out
