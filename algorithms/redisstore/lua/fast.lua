-- fast.lua: the fast path, run before anything else in the script. It
-- decides a plain Take (mode 0, one key per check, no key twice) whose
-- checks are all fixed_window, sliding_window, token_bucket, leaky_bucket
-- or leaky_queue, with one GET (MGET for several checks), one SET per key,
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
-- Per check the table f holds, from index (i-1)*FS: kind, L, W, C, n,
-- window index k, e, the loaded state t, x, y, the lateness offset, and the
-- new state nt, nx, ny.

local fastTime = false -- the fast path read TS, TN (main.lua reuses them)
do
  -- A compact call: ARGV[1] is "c" (the server's clock, no minimum TTL) or
  -- "c TS TN minTTL" (TS empty for the server's clock), then one argument
  -- per check (spec.lua). The script fallback and the cluster phases send
  -- the wide layout main.lua reads (a mode 0 one may take the fast path
  -- too); a compact call that leaves the fast path is rewritten into it.
  local h = ARGV[1]
  local compact, srv, hts, htn, minTTL = false, true, nil, nil, 0
  if h == 'c' then
    compact = true
  elseif sub(h, 1, 2) == 'c ' then
    local a, b, m = match(h, '^c (%-?%d*) (%d+) (%d+)$')
    if not m then return redis.error_reply('redisstore: malformed arguments') end
    compact, minTTL = true, tonumber(m)
    if a ~= '' then srv, hts, htn = false, tonumber(a), tonumber(b) end
  end
  local nchecks, ok
  if compact then
    nchecks = #ARGV - 1
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
  local specs
  if compact or ok then
    fastTables(nchecks)
    specs = fastSpecs
    ok = #KEYS == nchecks
    for i = 1, nchecks do
      local p
      if compact then
        p = spec(ARGV[i + 1])
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
        for j = 1, i - 1 do
          if KEYS[j] == key then ok = false end
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
      TS, TN = timeSec, tonumber(tm[2]) * 1000
    else
      TS, TN = hts, htn
    end
    fastTime = true
    -- fastlib.lua's tables, reused: out ends after this call's replies.
    local f, out = fastF, fastOut
    out[nchecks * 4 + 1] = nil
    local vals, v1
    if nchecks == 1 then
      v1 = call('GET', KEYS[1])
    else
      vals = call('MGET', unpack(KEYS))
    end
    for i = 1, nchecks do
      local p = specs[i]
      local b = (i - 1) * FS
      local kind, L, W, C, n = p[1], p[2], p[3], p[4], p[7]
      f[b + 1], f[b + 2], f[b + 3], f[b + 4], f[b + 5] = kind, L, W, C, n
      local v = v1
      if vals then
        v = vals[i]
        -- MGET reads a key of another type as missing: GET fails on it.
        if not v then call('GET', KEYS[i]) end
      end
      if kind >= 5 then
        -- loadBucket: F relative to t, or an empty bucket.
        local t, x = 0, 0
        if v then
          local key, s, ns, rx = KEYS[i], nil, nil, nil
          if v == memoV[key] then
            s, ns, rx = memoA[key], memoB[key], memoC[key]
          else
            s, ns, rx = match(v, '^(%-?%d+) (%d+) (%d+)$')
            if not s then foreign(key) end
            s, ns, rx = tonumber(s), tonumber(ns), tonumber(rx)
          end
          if not far(s) then t, x = rel(s, ns), rx end
        end
        f[b + 8], f[b + 9], f[b + 11] = t, x, 0
        if kind == 7 then -- leaky_queue: MaxDelay*L, a wide value
          numInit()
          f[b + 6] = bmul(p[6], L)
        end
      else
        -- window(W): its first two cases written out on plain numbers.
        local k, e
        if W % G == 0 then
          local q, r = divmod(TS, W / G)
          k, e = q, r * G + TN
        elseif G % W == 0 then
          local q, r = divmod(TN, W)
          k, e = TS * (G / W) + q, r
        else
          numInit()
          k, e = window(W)
        end
        -- loadWindow and lateWindow, and a state far ahead forgotten.
        local t, x, y = k - 2, 0, 0
        if v then
          local key = KEYS[i]
          if v == memoV[key] then
            t, x, y = memoA[key], memoB[key], memoC[key]
          else
            local sk, sx, sy = match(v, '^(%-?%d+) (%d+) ?(%d*)$')
            if not sk then foreign(key) end
            t, x, y = tonumber(sk), tonumber(sx), tonumber(sy) or 0
          end
        end
        local off = 0
        if t > k then off = (t - k) * W - e end
        if off > 2251799813685248 then t, x, y, off = k - 2, 0, 0, 0 end
        f[b + 6], f[b + 7], f[b + 8], f[b + 9], f[b + 10], f[b + 11] = k, e, t, x, y, off
      end
    end
    if ok then
      local all = true
      for i = 1, nchecks do
        if not decideFast(f, out, i, true) then all = false end
      end
      if not all then
        -- Denied: the checks that would pass are decided again without
        -- consuming; nothing is written.
        for i = 1, nchecks do
          if out[(i - 1) * 4 + 1] % 2 == 1 then decideFast(f, out, i, false) end
        end
        return out
      end
      -- A window key rewritten in the window it already holds keeps its
      -- expiry (KEEPTTL, cheaper than PX): every admitted write in window k
      -- expires just after the same instant (the end of window k for
      -- fixed_window, of window k+1 for sliding_window, which has curr > 0),
      -- so the expiry already set is after ResetAfter. Only on the server's
      -- clock with no MinTTL, where expiry and decisions share the clock.
      local keep = srv and minTTL == 0
      for i = 1, nchecks do
        local b = (i - 1) * FS
        local kind, key = f[b + 1], KEYS[i]
        local v, s1, s2, s3
        if kind == 1 then
          s1, s2, s3 = f[b + 12], f[b + 13], 0
          v = format('%d %d', s1, s2)
        elseif kind == 3 then
          s1, s2, s3 = f[b + 12], f[b + 13], f[b + 14]
          v = format('%d %d %d', s1, s2, s3)
        else
          s1, s2 = absol(f[b + 12])
          s3 = f[b + 13]
          v = format('%d %d %d', s1, s2, s3)
        end
        if memoOn then -- remember v's numbers (fastlib.lua)
          if memoV[key] == nil then
            if nmemo >= memoCap then memoV, memoA, memoB, memoC, nmemo = {}, {}, {}, {}, 0 end
            nmemo = nmemo + 1
          end
          memoV[key], memoA[key], memoB[key], memoC[key] = v, s1, s2, s3
        end
        if keep and (kind == 1 or kind == 3) and f[b + 8] == f[b + 12] then
          call('SET', key, v, 'KEEPTTL')
        else
          local ttl = max(floor(out[(i - 1) * 4 + 3] / 1000000) + 1, minTTL, 1)
          call('SET', key, v, 'PX', ttlArg(ttl))
        end
      end
      return out
    end
  end
end
