-- fast.lua: the fast path, run before anything else in the script. It
-- decides a plain Take (mode 0, one key per check, no key twice, at most
-- FASTMAX checks: fastlib.lua) whose
-- checks are all fixed_window, sliding_window, token_bucket, leaky_bucket
-- or leaky_queue, with one GET (MGET for several checks, and a GET for
-- each key MGET finds missing), one SET per key,
-- and no closures (its decisions are fastlib.lua's): a script's functions
-- are closures made anew on every call, and the general path (main.lua)
-- makes dozens. Its code is the general path's (cell.lua:
-- fixedWindow, slidingWindow, tokenBucket and tokenFast, leakyQueue),
-- specialised, on plain numbers exactly where the general path has them
-- (leakyQueue keeps its wide-value steps); a bucket whose
-- C*W or D*L reaches 2^52, a sliding_window whose products do, and a window
-- W that neither divides nor is a multiple of a second use the wide-number
-- helpers (numInit). Any other Take goes on to main.lua, at the same
-- instant, before anything is written. See doc.go, "Exactness".
--
-- Each check is loaded and decided in one pass (windowFast, bucketFast);
-- one check is then written at once, and with several, the table f holds
-- each admitted one's new state from index (i-1)*FS (their s1, s2, s3,
-- and whether it keeps its window) until every check is decided.

local fastTime = false -- the fast path read TS, TN (main.lua reuses them)
do
  -- A compact call: one argument per check (spec.lua), after a header
  -- "c TS TN minTTL" (TS empty for the server's clock) unless it is on the
  -- server's clock with no minimum TTL. The script fallback and the
  -- cluster phases send the wide layout main.lua reads, whose ARGV[1] (TS,
  -- or empty) has at most 11 characters, which a check's argument never
  -- has (its window alone has at least 7 digits); a mode 0 one may take
  -- the fast path too. A compact call that leaves the fast path is
  -- rewritten into the wide layout.
  local h = ARGV[1]
  local compact, srv, hts, htn, minTTL, first = true, true, nil, nil, 0, 1
  local p0 = SPECS[h] -- the first check's numbers, already parsed
  if not p0 then
    if sub(h, 1, 2) == 'c ' then
      local a, b, m = match(h, '^c (%-?%d*) (%d+) (%d+)$')
      if not m then return redis.error_reply('redisstore: malformed arguments') end
      minTTL, first = tonumber(m), 2
      if a ~= '' then srv, hts, htn = false, tonumber(a), tonumber(b) end
    elseif #h <= 11 then
      compact = false
    end
  end
  local nchecks, ok
  if compact then
    nchecks = #ARGV - first + 1
    if nchecks < 1 then return redis.error_reply('redisstore: malformed arguments') end
  else
    nchecks = tonumber(ARGV[5])
    ok = ARGV[4] == '0' and nchecks ~= nil and nchecks >= 1 and #ARGV == 5 + 7 * nchecks
    if ok then
      minTTL = tonumber(ARGV[3])
      if ARGV[1] ~= '' then srv, hts, htn = false, tonumber(ARGV[1]), tonumber(ARGV[2]) end
      ok = minTTL ~= nil and (srv or hts ~= nil and htn ~= nil)
    end
  end
  -- One check (the common Take): its numbers without the loop below.
  local specs, p1
  if compact and nchecks == 1 and #KEYS == 1 then
    local p = p0 or spec(ARGV[first])
    if p then
      local kind = p[1]
      if kind == 1 or kind == 3 or kind >= 5 and kind <= 7 then p1, ok = p, true end
    end
  end
  if not p1 and (compact or ok) then
    local seen -- past FASTPAIRS checks, the keys met so far
    if nchecks > FASTMAX then
      -- Too many for the fast path (see FASTMAX): the general path, its
      -- numbers in a table of this call's (not kept by the library).
      specs, ok = {}, false
    else
      if nchecks > fastCap then fastTables(nchecks) end
      specs = fastSpecs
      ok = #KEYS == nchecks
      if nchecks > FASTPAIRS then seen = {} end
    end
    for i = 1, nchecks do
      local p
      if compact then
        local a = ARGV[i + first - 1]
        p = SPECS[a] or spec(a)
        if not p then return redis.error_reply('redisstore: malformed check ' .. i) end
      else
        local a = 5 + (i - 1) * 7
        p = {tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), 0, tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7])}
        if not (p[1] and p[2] and p[3] and p[4] and p[6] and p[7]) then ok = false end
      end
      specs[i] = p
      if ok then
        local kind = p[1]
        if not (kind == 1 or kind == 3 or kind >= 5 and kind <= 7) then ok = false end
        local key = KEYS[i]
        if seen then
          if seen[key] then ok = false end
          seen[key] = true
        else
          for j = 1, i - 1 do
            if KEYS[j] == key then ok = false end
          end
        end
      end
    end
    if compact and not ok then
      -- The general path: the wide layout (main.lua), at the instant it reads.
      local w = {'', 0, minTTL, 0, nchecks}
      if not srv then w[1], w[2] = hts, htn end
      for i = 1, nchecks do
        local p, a = specs[i], 5 + (i - 1) * 7
        w[a + 1], w[a + 2], w[a + 3], w[a + 4], w[a + 5], w[a + 6], w[a + 7] = p[1], p[2], p[3], p[4], p[5], p[6], p[7]
      end
      ARGV = w
    end
  end
  if ok then
    if srv then
      local tm = call('TIME')
      local sec = tm[1]
      if sec ~= timeSecS then timeSecS, timeSec = sec, tonumber(sec) end
      -- Arithmetic reads the string as tonumber does, without its call.
      TS, TN = timeSec, tm[2] * 1000
    else
      TS, TN = hts, htn
    end
    fastTime = true
    -- A window key rewritten in the window it already holds (same) keeps
    -- its expiry (KEEPTTL, cheaper than PX): every admitted write in window
    -- k expires just after the same instant (the end of window k for
    -- fixed_window, of window k+1 for sliding_window, which has curr > 0),
    -- so the expiry already set is after ResetAfter. A sliding_window key
    -- must already count something in window k (curr > 0): one a GiveBack
    -- rolled into window k (curr 0) keeps the expiry of its write in
    -- window k-1, the end of window k. Only on the server's clock with no
    -- MinTTL, where expiry and decisions share the clock.
    local keep = srv and minTTL == 0
    if nchecks == 1 then
      -- One check: decided and written at once.
      local key, p = KEYS[1], p1 or specs[1]
      local kind = p[1]
      local check = bucketFast
      if kind <= 3 then check = windowFast end
      local a, o1, o2, o3, o4, s1, s2, s3, same = check(kind, p, call('GET', key), key, true)
      local out = fastOut1
      out[1], out[2], out[3], out[4] = o1, o2, o3, o4
      if a then writeFast(key, kind, s1, s2, s3, same, o3, keep, minTTL) end
      return out
    end
    -- fastlib.lua's tables, reused: out ends after this call's replies.
    local f, out = fastF, fastOut
    out[nchecks * 4 + 1] = nil
    local vals = call('MGET', unpack(KEYS))
    -- Each check is decided as it is loaded (no key is repeated, so the
    -- checks are independent); an admitted check's new state waits in f
    -- until all are decided.
    local all = true
    for i = 1, nchecks do
      local p, v, key = specs[i], vals[i], KEYS[i]
      -- MGET reads a key of another type as missing: GET fails on it.
      if not v then call('GET', key) end
      local kind = p[1]
      local check = bucketFast
      if kind <= 3 then check = windowFast end
      local a, o1, o2, o3, o4, s1, s2, s3, same = check(kind, p, v, key, true)
      local o = (i - 1) * 4
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = o1, o2, o3, o4
      if a then
        f[o + 1], f[o + 2], f[o + 3], f[o + 4] = s1, s2, s3, same
      else
        all = false
      end
    end
    if not all then
      -- Denied: the checks that would pass are decided again without
      -- consuming, on their state as loaded; nothing is written.
      for i = 1, nchecks do
        local o = (i - 1) * 4
        if out[o + 1] % 2 == 1 then
          local p = specs[i]
          local kind = p[1]
          local _, o1, o2, o3, o4
          if kind <= 3 then
            _, o1, o2, o3, o4 = windowFast(kind, p, vals[i], KEYS[i], false)
          else
            _, o1, o2, o3, o4 = bucketFast(kind, p, vals[i], KEYS[i], false)
          end
          out[o + 1], out[o + 2], out[o + 3], out[o + 4] = o1, o2, o3, o4
        end
      end
      return out
    end
    for i = 1, nchecks do
      local o = (i - 1) * 4
      writeFast(KEYS[i], specs[i][1], f[o + 1], f[o + 2], f[o + 3], f[o + 4], out[o + 3], keep, minTTL)
    end
    return out
  end
end
