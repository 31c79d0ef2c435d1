-- fast.lua: the fast path, run before anything else in the script. It
-- decides a plain Take (mode 0, one key per check, no key twice) whose
-- checks are all fixed_window, sliding_window, token_bucket or
-- leaky_bucket, with one GET (MGET for several checks), one SET per key,
-- and no closures but decideFast (and wait, for a sliding_window): a
-- script's functions are closures made anew on every call, and the general
-- path (main.lua) makes dozens. Its code is the general path's (cell.lua:
-- fixedWindow, slidingWindow, tokenBucket and tokenFast), specialised, on
-- plain numbers exactly where the general path has them; a bucket whose
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
  -- per check (spec.lua). The cluster phases send the wide layout main.lua
  -- reads; a compact call that leaves the fast path is rewritten into it.
  local h = ARGV[1]
  local compact, srv, hts, htn, minTTL = false, true, nil, nil, 0
  if h == 'c' then
    compact = true
  elseif string.sub(h, 1, 2) == 'c ' then
    local a, b, m = string.match(h, '^c (%-?%d*) (%d+) (%d+)$')
    if not m then return redis.error_reply('redisstore: malformed arguments') end
    compact, minTTL = true, tonumber(m)
    if a ~= '' then srv, hts, htn = false, tonumber(a), tonumber(b) end
  end
  local nchecks = #ARGV - 1
  local specs
  local ok = compact
  if compact then
    if nchecks < 1 then return redis.error_reply('redisstore: malformed arguments') end
    specs = {}
    ok = #KEYS == nchecks
    for i = 1, nchecks do
      local p = spec(ARGV[i + 1])
      if not p then return redis.error_reply('redisstore: malformed check ' .. i) end
      specs[i] = p
      if ok then
        local kind = p[1]
        if not (kind == 1 or kind == 3 or kind == 5 or kind == 6) then ok = false end
        local key = KEYS[i]
        for j = 1, i - 1 do
          if KEYS[j] == key then ok = false end
        end
      end
    end
    if not ok then
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
      local tm = redis.call('TIME')
      TS, TN = tonumber(tm[1]), tonumber(tm[2]) * 1000
    else
      TS, TN = hts, htn
    end
    fastTime = true
    local FS = 14
    -- f and out are made at their final size when they are small (a table
    -- that grows is reallocated at every power of two: garbage, which the
    -- script's collector then pays for).
    local f, out
    if nchecks == 1 then
      f, out = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}
    elseif nchecks == 2 then
      f, out = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    elseif nchecks == 3 then
      f, out = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    elseif nchecks == 4 then
      f, out = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    else
      f, out = {}, {}
    end
    local vals, v1
    if nchecks == 1 then
      v1 = redis.call('GET', KEYS[1])
    else
      vals = redis.call('MGET', unpack(KEYS))
    end
    for i = 1, nchecks do
      local p = specs[i]
      local b = (i - 1) * FS
      local kind, L, W, C, n = p[1], p[2], p[3], p[4], p[7]
      f[b + 1], f[b + 2], f[b + 3], f[b + 4], f[b + 5] = kind, L, W, C, n
      local v = v1
      if vals then v = vals[i] end
      if kind == 5 or kind == 6 then
        -- loadBucket: F relative to t, or an empty bucket.
        local t, x = 0, 0
        if v then
          local s, ns, rx = string.match(v, '^(%-?%d+) (%d+) (%d+)$')
          if s then
            s = tonumber(s)
            if not far(s) then t, x = rel(s, tonumber(ns)), tonumber(rx) end
          end
        end
        f[b + 8], f[b + 9], f[b + 11] = t, x, 0
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
          local sk, sx, sy = string.match(v, '^(%-?%d+) (%d+) ?(%d*)$')
          if sk then t, x, y = tonumber(sk), tonumber(sx), tonumber(sy) or 0 end
        end
        local off = 0
        if t > k then off = (t - k) * W - e end
        if off > 2251799813685248 then t, x, y, off = k - 2, 0, 0, 0 end
        f[b + 6], f[b + 7], f[b + 8], f[b + 9], f[b + 10], f[b + 11] = k, e, t, x, y, off
      end
    end
    -- decideFast decides check i on its loaded state into out, and, when
    -- consuming an admitted check, its new state into f. It returns whether
    -- the check is admitted, or nil to give up the fast path.
    local function decideFast(i, consume)
      local b = (i - 1) * FS
      local kind, L, W, C, n = f[b + 1], f[b + 2], f[b + 3], f[b + 4], f[b + 5]
      local t, x, off = f[b + 8], f[b + 9], f[b + 11]
      local allowed, r, ra, rs, nx = false, 0, 0, 0, 0
      local CW, dl = 0, 0
      if kind == 5 or kind == 6 then
        CW = C * W
        if t > 0 or (t == 0 and x > 0) then dl = t * L + x end
      end
      if (kind == 5 or kind == 6) and not (CW < T52 and dl < T52) then
        -- tokenBucket on wide values (its deficit, advance, bucketWait).
        numInit()
        local function bwait(dlw, m)
          local room = bmul(C - m, W)
          if bcmp(room, dlw) >= 0 then return 0 end
          return bdivceil(bsub(dlw, room), L)
        end
        local dlw = 0
        if t > 0 or (t == 0 and x > 0) then dlw = badd(bmul(t, L), x) end
        allowed = bcmp(bmul(C - n, W), dlw) >= 0
        if allowed and consume then
          local ct, cx = t, x
          if ct < 0 or (ct == 0 and cx == 0) then ct, cx = 0, 0 end
          local q, rr = bdivmod(bmul(n, W), L)
          ct = ct + q
          rr = rr + cx
          if rr >= L then
            rr = rr - L
            ct = ct + 1
          end
          f[b + 12], f[b + 13] = ct, rr
          dlw = 0
          if ct > 0 or (ct == 0 and rr > 0) then dlw = badd(bmul(ct, L), rr) end
        elseif not allowed then
          ra = bwait(dlw, n)
        end
        local avail = 0
        if bcmp(dlw, bmul(C, W)) < 0 then avail = C - bdivceil(dlw, W) end
        r = avail
        rs = bdivceil(dlw, L)
        if avail < C then nx = bwait(dlw, avail + 1) end
      elseif kind == 5 or kind == 6 then
        -- tokenFast: C*W and D*L are below 2^52.
        allowed = dl <= (C - n) * W
        if allowed and consume then
          local ct, cx = t, x
          if ct < 0 or (ct == 0 and cx == 0) then ct, cx = 0, 0 end
          local q, rr = divmod(n * W, L)
          ct = ct + q
          rr = rr + cx
          if rr >= L then
            rr = rr - L
            ct = ct + 1
          end
          f[b + 12], f[b + 13] = ct, rr
          dl = ct * L + rr
        elseif not allowed then
          local room = (C - n) * W
          if room < dl then
            local q, m = divmod(dl - room, L)
            if m > 0 then q = q + 1 end
            ra = q
          end
        end
        local avail = 0
        if dl < CW then
          local q, m = divmod(dl, W)
          if m > 0 then q = q + 1 end
          avail = C - q
        end
        r = avail
        local q, m = divmod(dl, L)
        if m > 0 then q = q + 1 end
        rs = q
        if avail < C then
          local room = (C - avail - 1) * W
          if room < dl then
            q, m = divmod(dl - room, L)
            if m > 0 then q = q + 1 end
            nx = q
          end
        end
      else
        local k, e = f[b + 6], f[b + 7]
        if off > 0 then k, e = t, 0 end
        if kind == 1 then
          -- fixedWindow
          local count = x
          if t ~= k then count = 0 end
          local ending = W - e
          if count + n <= L then
            allowed = true
            if consume then
              count = count + n
              f[b + 12], f[b + 13] = k, count
            end
          else
            ra = ending
          end
          r = L - count
          if count > 0 then
            rs = ending
            nx = ending
          end
        else
          -- slidingWindow; slidingWait's products are plain when L*W < 2^52.
          local prev, curr = 0, 0
          if t == k then
            prev, curr = x, f[b + 10]
          elseif t == k - 1 then
            prev = f[b + 10]
          end
          local small = L * W < T52 -- as slidingWait decides
          if not small then numInit() end
          local function wait(m)
            if small then
              local a = L - curr - m
              if a >= 0 then
                if prev == 0 then return 0 end
                local X = a * W
                if X >= (W - e) * prev then return 0 end
                local fq = divmod(X, prev)
                if fq > 0 then return W - e - fq end
              end
              if curr == 0 or L - m >= curr then return W - e end
              local fq = divmod((L - m) * W, curr)
              if fq > 0 then return W - e + W - fq end
              return 2 * W - e
            end
            local a = L - curr - m
            if a >= 0 then
              if prev == 0 then return 0 end
              local X = bmul(a, W)
              if bcmp(X, bmul(W - e, prev)) >= 0 then return 0 end
              local fq = bdivmod(X, prev)
              if fq > 0 then return W - e - fq end
            end
            if curr == 0 then return W - e end
            if L - m >= curr then return W - e end
            local fq = bdivmod(bmul(L - m, W), curr)
            if fq > 0 then return W - e + W - fq end
            return 2 * W - e
          end
          local avail = L - curr
          if prev > 0 then
            -- mulDivCeil(prev, W - e, W): bmul keeps the product plain
            -- exactly when it is below 2^52.
            local p = prev * (W - e)
            if p < T52 then
              local q, m = divmod(p, W)
              if m > 0 then q = q + 1 end
              avail = avail - q
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
              f[b + 12], f[b + 13], f[b + 14] = k, prev, curr
            end
          else
            ra = wait(n)
          end
          r = math.max(avail, 0)
          if curr > 0 then
            rs = 2 * W - e
          elseif prev > 0 then
            rs = W - e
          end
          if r < L then nx = wait(r + 1) end
        end
        if off > 0 then -- later
          if not allowed then ra = ra + off end
          if rs > 0 then rs = rs + off end
          if nx > 0 then nx = nx + off end
        end
      end
      local o = (i - 1) * 6
      out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = allowed and 1 or 0, r, ra, rs, nx, 0
      return allowed
    end
    if ok then
      local all = true
      for i = 1, nchecks do
        if not decideFast(i, true) then all = false end
      end
      if not all then
        -- Denied: the checks that would pass are decided again without
        -- consuming; nothing is written.
        for i = 1, nchecks do
          if out[(i - 1) * 6 + 1] == 1 then decideFast(i, false) end
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
        local kind = f[b + 1]
        local v
        if kind == 1 then
          v = string.format('%d %d', f[b + 12], f[b + 13])
        elseif kind == 3 then
          v = string.format('%d %d %d', f[b + 12], f[b + 13], f[b + 14])
        else
          local s, ns = absol(f[b + 12])
          v = string.format('%d %d %d', s, ns, f[b + 13])
        end
        if keep and kind ~= 5 and kind ~= 6 and f[b + 8] == f[b + 12] then
          redis.call('SET', KEYS[i], v, 'KEEPTTL')
        else
          local ttl = math.max(math.floor(out[(i - 1) * 6 + 4] / 1000000) + 1, minTTL, 1)
          redis.call('SET', KEYS[i], v, 'PX', ttl)
        end
      end
      return out
    end
  end
end
