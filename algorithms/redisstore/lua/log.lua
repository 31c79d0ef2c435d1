-- log.lua: sliding_log, mirroring algorithms/sliding_log.go.
--
-- Two keys: KEY (a string, the total cost of the events in the list) and
-- LKEY (a list of the accepted events, oldest first, each "s n cost": the
-- instant s*10^9+n and the units accepted at it). Events are appended in
-- non-decreasing order of instant, because a request is decided no earlier
-- than the newest event (the store's "late" rule), so the list is sorted.
-- The list is read lazily in chunks, so a decision reads only the events it
-- needs: the newest, the ones leaving the window (none when the newest
-- leaves too), and for a wait the oldest ones until enough units have left.

local logKind_
local function logKind()
  if logKind_ then return logKind_ end
  local ANCIENT = -4503599627370496 -- -2^52: before any window that matters

  -- parseEvent returns the instant (relative to the call's) and the units
  -- of item, an event of the list at S.lkey; an item the store did not
  -- write fails the call.
  local function parseEvent(S, item)
    local s, ns, n = match(item, '^(%-?%d+) (%d+) (%d+)$')
    if not s then foreign(S.lkey) end -- not an event the store wrote
    s, ns, n = tonumber(s), tonumber(ns), tonumber(n)
    if ns >= G or n < 1 or n >= T52 then foreign(S.lkey) end -- nor this
    if far(s) then return ANCIENT, n end
    return rel(s, ns), n
  end

  local function logEvent(S, i)
    if i > S.len then
      return S.app[i - S.len]
    end
    local e = S.cache[i]
    if not e then
      local from = i - 1
      local items = call('LRANGE', S.lkey, from, from + 31)
      for j, item in ipairs(items) do
        local t, n = parseEvent(S, item)
        S.cache[from + j] = {t = t, n = n}
      end
      e = S.cache[i]
    end
    if i == S.len and S.merge > 0 then
      return {t = e.t, n = e.n + S.merge}
    end
    return e
  end

  local function logCount(S) return S.len + #S.app end

  -- canonical reports whether the integer x (digits after an optional
  -- '-') has at most 15 digits, so that it is exact as a double, and is
  -- written as fmt writes it: no leading zero, no "-0".
  local function canonical(x)
    local digits = match(x, '^%-?(%d+)$')
    return digits ~= nil and #digits <= 15 and fmt(tonumber(x)) == x
  end

  -- ownLogSum returns the sum of the units of the events in the list at
  -- lkey, when every item is an event as writeLog writes it ("s ns n":
  -- canonical integers, 0 <= ns < 10^9, n >= 1) in non-decreasing order
  -- of instant; otherwise the list is not the store's, and the call fails
  -- as foreign. It reads the list in chunks.
  local function ownLogSum(lkey)
    if call('TYPE', lkey).ok ~= 'list' then foreign(lkey) end
    local sum, ps, pns = 0, nil, nil
    local from = 0
    while true do
      local items = call('LRANGE', lkey, from, from + 1023)
      for _, item in ipairs(items) do
        local s, ns, n = match(item, '^(%-?%d+) (%d+) (%d+)$')
        if not (s and canonical(s) and canonical(ns) and canonical(n)) then foreign(lkey) end
        s, ns, n = tonumber(s), tonumber(ns), tonumber(n)
        if ns >= G or n < 1 then foreign(lkey) end
        if ps and (s < ps or (s == ps and ns < pns)) then foreign(lkey) end
        ps, pns = s, ns
        sum = sum + n
        if sum >= T52 then foreign(lkey) end
      end
      if #items < 1024 then return sum end
      from = from + 1024
    end
  end

  -- loadLog loads the log at key and lkey; with ro (a peek) it writes
  -- nothing, not even a rebuilt total.
  local function loadLog(P, key, lkey, ro)
    local S = {key = key, lkey = lkey, sum = 0, head = 1, len = 0, cache = {}, app = {}, merge = 0, shared = true}
    local v = call('GET', key)
    if v then
      -- The total is a count as writeLog writes it, of at least one unit
      -- per event of the list; any other value is not the store's (read
      -- as a number, a negative total admitted past the limit).
      if not (match(v, '^%d+$') and canonical(v)) then foreign(key) end
      S.sum = tonumber(v)
      S.len = call('LLEN', lkey)
      if S.len == 0 then
        -- A total without its list: the list was evicted (maxmemory) or
        -- deleted on its own, and with it the events the total counts.
        -- They are lost, as an evicted key of another kind is: the log
        -- starts empty (its events cannot be read to decide, or to wait).
        S.sum = 0
      elseif S.sum < S.len then
        foreign(key)
      end
    elseif call('EXISTS', lkey) == 1 then
      -- A list without its total: the total was evicted (maxmemory) or
      -- deleted on its own. The list holds every event the total counted
      -- (each write sets the total to the sum of the list's items), so the
      -- total is rebuilt exactly, and written back with the list's expiry,
      -- when the list is the store's. Any other list is the application's.
      S.sum = ownLogSum(lkey)
      S.len = call('LLEN', lkey)
      local ttl = call('PTTL', lkey)
      if ro then
        -- A peek: the total is rebuilt for this call only.
      elseif ttl > 0 then
        call('SET', key, fmt(S.sum), 'PX', fmt(ttl))
      else
        call('SET', key, fmt(S.sum))
      end
      return S, true
    end
    return S, v ~= false and v ~= nil
  end

  -- logLatestOff returns latest(t) - t: how far the newest event is ahead of t.
  local function logLatestOff(S)
    local c = logCount(S)
    if S.head <= c then
      return max(0, logEvent(S, c).t)
    end
    return 0
  end

  -- pruneLog forgets the events no longer in the window at tl (ts < tl-W).
  --
  -- Its work is small per event it forgets: a log may hold up to Limit
  -- (10^9) events, and a script call blocks Redis. When the list's newest
  -- event has left the window, every event of the list has (the list is
  -- in order of instant): their units are the total's but for the events
  -- appended in this call, and none is read. Otherwise the first event
  -- left is searched for, and the units of those before it are summed,
  -- read in chunks of up to 1024 items (one LRANGE each), with no table
  -- made for an event forgotten.
  local function pruneLog(P, S, tl)
    if S.head > S.len then return end
    local bound = tl - P.W
    local last = logEvent(S, S.len)
    if last.t < bound then
      local appended = 0
      for _, e in ipairs(S.app) do appended = appended + e.n end
      local units = S.sum - appended
      -- The total counts every event of the list, each of at least one
      -- unit (and the newest's units, read): one it is short of is not
      -- the store's (and would leave the total negative).
      if last.n > units or units < S.len - S.head + 1 then foreign(S.key) end
      S.sum = appended
      S.head = S.len + 1
      S.dirty = true
      return
    end
    -- The newest event stays. The list is in order of instant: the first
    -- event in the window, k, is found by probing events head + 1, + 3,
    -- + 7, ... and then halving (events read in chunks of 32, kept, as
    -- logEvent reads them), in O(log) reads of the events leaving.
    local lo = S.head -- the newest index known to be leaving
    if logEvent(S, lo).t >= bound then return end -- none leaves
    local hi, step = S.len, 1 -- hi: the oldest index known to stay
    while lo + step < hi do
      if logEvent(S, lo + step).t >= bound then
        hi = lo + step
        break
      end
      lo = lo + step
      step = 2 * step
    end
    while hi - lo > 1 do
      local mid = floor((lo + hi) / 2)
      if logEvent(S, mid).t >= bound then hi = mid else lo = mid end
    end
    -- The units of events head .. hi-1, which leave: the ones read above
    -- as kept, the others read in chunks of up to 1024 items, each
    -- checked as logEvent checks it (9 digits at most: ns < 10^9) but
    -- for its instant, which the search above has placed.
    local units, i = 0, S.head
    while i < hi do
      local e = S.cache[i]
      if e then
        units = units + e.n
        i = i + 1
      else
        local items = call('LRANGE', S.lkey, i - 1, math.min(i + 1022, hi - 2))
        if #items == 0 then foreign(S.lkey) end
        for _, item in ipairs(items) do
          local n = tonumber(match(item, '^%-?%d+ %d%d?%d?%d?%d?%d?%d?%d?%d? (%d+)$'))
          if not n or n < 1 or n >= T52 then foreign(S.lkey) end -- as parseEvent
          units = units + n
        end
        i = i + #items
      end
    end
    -- The total counts every event of the list: units it is short of are
    -- not the store's (and would leave the total negative).
    if units > S.sum then foreign(S.key) end
    S.sum = S.sum - units
    S.head = hi
    S.dirty = true
  end

  local function cloneLog(S)
    local app = {}
    for i, e in ipairs(S.app) do app[i] = {t = e.t, n = e.n} end
    return {key = S.key, lkey = S.lkey, sum = S.sum, head = S.head, len = S.len,
      cache = S.cache, app = app, merge = S.merge}
  end

  local function commitLog(S, t, n)
    S.sum = S.sum + n
    local c = logCount(S)
    if c >= S.head and logEvent(S, c).t == t then
      if c > S.len then
        S.app[#S.app].n = S.app[#S.app].n + n
      else
        S.merge = S.merge + n
      end
      return
    end
    S.app[#S.app + 1] = {t = t, n = n}
  end

  -- logWait returns the shortest wait after which m units are available,
  -- when the log also holds extra units accepted at tl; given m2 too, it
  -- returns the wait for m2 units as well, from the same walk.
  --
  -- The wait is the one until the oldest event at which enough units have
  -- left leaves. A log may hold up to Limit (10^9) events and a script
  -- call blocks Redis, so the walk to it reads the units of the events
  -- before it in chunks growing from 32 to 1024 items (one LRANGE each),
  -- checked as pruneLog checks them, with no table made per event, and
  -- stops at the chunk where enough have left; only the event found is
  -- read in full (through logEvent). The list's newest event, which may
  -- hold units merged in this call, and the events appended are read
  -- through logEvent. A list of events of one unit each (its units are
  -- as many as its events) is not read but for the event found.
  local function logWait(P, S, tl, m, extra, m2)
    local sum = S.sum + extra
    local need1, need2 = sum + m - P.L, nil
    if m2 then need2 = sum + m2 - P.L end
    local most = need1
    if need2 and need2 > most then most = need2 end
    local at1, at2 -- the indexes of the events at which enough have left
    local c = logCount(S)
    local units, i, chunk = 0, S.head, 32
    local function reached(k)
      if not at1 and units >= need1 then at1 = k end
      if need2 and not at2 and units >= need2 then at2 = k end
    end
    reached(i - 1)
    -- When the list's units are as many as its events, each event is of
    -- one unit (each is of at least one): the events before the newest
    -- are counted, not read.
    local ones = false
    if S.head < S.len then
      local listUnits = S.sum - S.merge
      for _, e in ipairs(S.app) do listUnits = listUnits - e.n end
      ones = listUnits == S.len - S.head + 1
    end
    while i <= c and units < most do
      if ones and i < S.len then
        local before, take = units, math.min(most - units, S.len - i)
        units = units + take
        if not at1 and units >= need1 then at1 = i + need1 - before - 1 end
        if need2 and not at2 and units >= need2 then at2 = i + need2 - before - 1 end
        i = i + take
      elseif i >= S.len or S.cache[i] then
        units = units + logEvent(S, i).n
        reached(i)
        i = i + 1
      else
        local items = call('LRANGE', S.lkey, i - 1, math.min(i + chunk - 2, S.len - 2))
        if #items == 0 then foreign(S.lkey) end
        chunk = math.min(2 * chunk, 1024)
        for _, item in ipairs(items) do
          local n = tonumber(match(item, '^%-?%d+ %d%d?%d?%d?%d?%d?%d?%d?%d? (%d+)$'))
          if not n or n < 1 or n >= T52 then foreign(S.lkey) end -- as parseEvent
          units = units + n
          reached(i)
          i = i + 1
          if units >= most then break end
        end
      end
    end
    local function wait(at)
      if not at then return P.W + 1 end
      if at < S.head then return 0 end
      return logEvent(S, at).t + P.W + 1 - tl
    end
    if m2 then return wait(at1), wait(at2) end
    return wait(at1)
  end

  local function slidingLog(P, S, tl, n, consume)
    local d = newDecision(P.L)
    d.a = S.sum + n <= P.L
    local sum = S.sum
    if d.a and consume then sum = sum + n end
    d.r = max(P.L - sum, 0)
    if sum > 0 then
      local newest = tl
      if not d.a or not consume then
        newest = logEvent(S, logCount(S)).t
      end
      d.rs = newest + P.W + 1 - tl
    end
    if not d.a then
      -- Denied: both waits from one walk of the log.
      if d.r < P.L then
        d.ra, d.nx = logWait(P, S, tl, n, 0, d.r + 1)
      else
        d.ra = logWait(P, S, tl, n, 0)
      end
    elseif d.r < P.L then
      local extra = 0
      if consume then extra = n end
      d.nx = logWait(P, S, tl, d.r + 1, extra)
    end
    return d
  end

  local function writeLog(S, ttl)
    if S.head > S.len then
      if S.len > 0 then call('DEL', S.lkey) end
    elseif S.head > 1 then
      call('LTRIM', S.lkey, S.head - 1, -1)
    end
    if S.merge > 0 then
      local e = logEvent(S, S.len)
      local s, ns = absol(e.t)
      call('LSET', S.lkey, -1, fmt(s) .. ' ' .. fmt(ns) .. ' ' .. fmt(e.n))
    end
    if #S.app > 0 then
      local items = {}
      for i, e in ipairs(S.app) do
        local s, ns = absol(e.t)
        items[i] = fmt(s) .. ' ' .. fmt(ns) .. ' ' .. fmt(e.n)
      end
      call('RPUSH', S.lkey, unpack(items))
    end
    if ttl then
      call('SET', S.key, fmt(S.sum), 'PX', ttlArg(ttl))
      call('PEXPIRE', S.lkey, ttlArg(ttl))
    else
      call('SET', S.key, fmt(S.sum), 'KEEPTTL')
    end
  end
  logKind_ = {load = loadLog, latestOff = logLatestOff, prune = pruneLog, clone = cloneLog, commit = commitLog, decide = slidingLog, write = writeLog, event = logEvent, count = logCount}
  return logKind_
end
