-- cell.lua: the kinds whose state is an instant and up to two counts,
-- mirroring algorithms/cell.go, fixed_window.go, sliding_window.go,
-- token_bucket.go and leaky_queue.go line by line.
--
-- Stored values (SET key value PX ttl):
--   fixed_window:   "k x"      window index k = floor(t/W) (< 2^53), count x
--   sliding_window: "k x y"    window index, count of k-1, count of k
--   token_bucket, leaky_bucket, leaky_queue: "s n x", the instant F = s*10^9+n
--                   plus x/L ns (the bucket full, the queue free)
-- In the script, the instant of the bucket kinds is held relative to t.
-- Each group of kinds is a module made on first use (a script's functions
-- are closures made anew on every call, so a call makes only those it needs).

local function newDecision(limit)
  return {a = false, lim = limit, r = 0, ra = 0, rs = 0, nx = 0, dl = 0}
end

local windowKinds_
local function windowKinds()
  if windowKinds_ then return windowKinds_ end
  -- Window kinds ------------------------------------------------------------

  local function loadWindow(P, key)
    local v = call('GET', key)
    if v then
      local k, x, y = match(v, '^(%-?%d+) (%d+) ?(%d*)$')
      if k then
        return {t = tonumber(k), x = tonumber(x), y = tonumber(y) or 0}, true
      end
    end
    return {t = P.k - 2, x = 0, y = 0}, false
  end

  -- lateWindow returns the offset of p.late: when the key's window is ahead
  -- of t's, the decision is taken at that window's start.
  local function lateWindow(P, c)
    if c.t > P.k then
      return (c.t - P.k) * P.W - P.e
    end
    return 0
  end

  local function fixedWindow(P, c, off, n, consume)
    local k, e = P.k, P.e
    if off > 0 then k, e = c.t, 0 end
    if c.t ~= k then c = {t = k, x = 0, y = 0} end
    local W, L = P.W, P.L
    local ending = W - e
    local d = newDecision(L)
    local count = c.x
    if count + n <= L then
      d.a = true
      if consume then
        count = count + n
        c = {t = k, x = count, y = 0}
      end
    else
      d.ra = ending
    end
    d.r = L - count
    if count > 0 then
      d.rs = ending
      d.nx = ending
    end
    return d, c
  end

  -- slidingWait mirrors params.slidingWait: the shortest wait after which m
  -- units are available. Quotients that may exceed 2^53 are only compared.
  -- slidingWaitSmall is slidingWait when L*W < 2^52: every product below
  -- is of a count (at most L) and a duration (at most W), so plain numbers.
  local function slidingWaitSmall(W, L, prev, curr, e, m)
    local a = L - curr - m
    if a >= 0 then
      if prev == 0 then return 0 end
      local X = a * W
      if X >= (W - e) * prev then return 0 end
      local f = divmod(X, prev)
      if f > 0 then return W - e - f end
    end
    if curr == 0 or L - m >= curr then return W - e end
    local f = divmod((L - m) * W, curr)
    if f > 0 then return W - e + W - f end
    return 2 * W - e
  end

  local function slidingWait(P, prev, curr, e, m)
    local W, L = P.W, P.L
    if L * W < T52 then return slidingWaitSmall(W, L, prev, curr, e, m) end
    local a = L - curr - m
    if a >= 0 then
      if prev == 0 then return 0 end
      local X = bmul(a, W)
      if bcmp(X, bmul(W - e, prev)) >= 0 then return 0 end -- f >= W-e
      local f = bdivmod(X, prev)
      if f > 0 then return W - e - f end
    end
    if curr == 0 then return W - e end
    if L - m >= curr then return W - e end -- f = floor((L-m)*W/curr) >= W
    local f = bdivmod(bmul(L - m, W), curr)
    if f > 0 then return W - e + W - f end
    return 2 * W - e
  end

  local function slidingWindow(P, c, off, n, consume)
    local W, L = P.W, P.L
    local k, e = P.k, P.e
    if off > 0 then k, e = c.t, 0 end
    if c.t == k then
      -- same window
    elseif c.t == k - 1 then
      c = {t = k, x = c.y, y = 0}
    else
      c = {t = k, x = 0, y = 0}
    end
    local prev, curr = c.x, c.y
    local d = newDecision(L)
    local avail = L - curr
    if prev > 0 then avail = avail - mulDivCeil(prev, W - e, W) end
    if avail >= n then
      d.a = true
      if consume then
        curr = curr + n
        avail = avail - n
        c = {t = k, x = prev, y = curr}
      end
    else
      d.ra = slidingWait(P, prev, curr, e, n)
    end
    d.r = max(avail, 0)
    if curr > 0 then
      d.rs = 2 * W - e
    elseif prev > 0 then
      d.rs = W - e
    end
    if d.r < L then
      d.nx = slidingWait(P, prev, curr, e, d.r + 1)
    end
    return d, c
  end

  local function encodeWindow(P, c)
    if P.kind == 1 then
      return format('%d %d', c.t, c.x)
    end
    return format('%d %d %d', c.t, c.x, c.y)
  end
  windowKinds_ = {load = loadWindow, late = lateWindow, fixed = fixedWindow, sliding = slidingWindow, encode = encodeWindow}
  return windowKinds_
end

local bucketKinds_
local function bucketKinds()
  if bucketKinds_ then return bucketKinds_ end
  -- Bucket kinds --------------------------------------------------------------
  -- c.t is F's whole ns relative to t (|c.t| < 2^51), c.x its remainder in 1/L ns.

  local function loadBucket(P, key)
    local v = call('GET', key)
    if v then
      local s, ns, x = match(v, '^(%-?%d+) (%d+) (%d+)$')
      if s then
        s = tonumber(s)
        if not far(s) then
          return {t = rel(s, tonumber(ns)), x = tonumber(x)}, true
        end
        -- F more than 23 days before t: the bucket is full (exactly as in
        -- algorithms: the deficit is zero). See doc.go for F far after t.
      end
    end
    return {t = 0, x = 0}, false
  end

  -- deficit returns D*L with D = max(0, F - t), as a big number.
  local function deficit(P, c)
    if c.t < 0 or (c.t == 0 and c.x == 0) then return 0 end
    return badd(bmul(c.t, P.L), c.x)
  end

  -- advance returns the state after admitting cost n: F = max(F, t) + n*W/L.
  local function advance(P, c, n)
    local ct, cx = c.t, c.x
    if ct < 0 or (ct == 0 and cx == 0) then ct, cx = 0, 0 end
    local q, r = bdivmod(bmul(n, P.W), P.L)
    ct = ct + q
    r = r + cx
    if r >= P.L then
      r = r - P.L
      ct = ct + 1
    end
    return {t = ct, x = r}
  end

  -- bucketWait: C - ceil((D-w)*L/W) >= m  <=>  w*L >= D*L - (C-m)*W.
  local function bucketWait(P, dl, m)
    local room = bmul(P.C - m, P.W)
    if bcmp(room, dl) >= 0 then return 0 end
    return bdivceil(bsub(dl, room), P.L)
  end

  -- ceilDiv returns ceil(a/b) for 0 <= a < 2^52, 0 < b < 2^52.
  local function ceilDiv(a, b)
    local q, r = divmod(a, b)
    if r > 0 then q = q + 1 end
    return q
  end

  -- tokenFast is tokenBucket when C*W and D*L are below 2^52: the same
  -- steps on plain numbers (after admitting n, D*L is at most C*W).
  local function tokenFast(P, c, n, consume, CW, dl)
    local L, W, C = P.L, P.W, P.C
    local d = newDecision(C)
    d.a = dl <= (C - n) * W
    if d.a and consume then
      local ct, cx = c.t, c.x
      if ct < 0 or (ct == 0 and cx == 0) then ct, cx = 0, 0 end
      local q, r = divmod(n * W, L)
      ct = ct + q
      r = r + cx
      if r >= L then
        r = r - L
        ct = ct + 1
      end
      c = {t = ct, x = r}
      dl = ct * L + r
    elseif not d.a then
      local room = (C - n) * W
      if room < dl then d.ra = ceilDiv(dl - room, L) end
    end
    local avail = 0
    if dl < CW then avail = C - ceilDiv(dl, W) end
    d.r = avail
    d.rs = ceilDiv(dl, L)
    if avail < C then
      local room = (C - avail - 1) * W
      if room < dl then d.nx = ceilDiv(dl - room, L) end
    end
    return d, c
  end

  local function tokenBucket(P, c, off, n, consume)
    local CW = P.C * P.W
    if CW < T52 then
      local dl = 0
      if c.t > 0 or (c.t == 0 and c.x > 0) then dl = c.t * P.L + c.x end
      if dl < T52 then return tokenFast(P, c, n, consume, CW, dl) end
    end
    local d = newDecision(P.C)
    local dl = deficit(P, c)
    -- n tokens are there when C - ceil(D*L/W) >= n, that is D*L <= (C-n)*W.
    d.a = bcmp(bmul(P.C - n, P.W), dl) >= 0
    if d.a and consume then
      c = advance(P, c, n)
      dl = deficit(P, c)
    elseif not d.a then
      d.ra = bucketWait(P, dl, n)
    end
    -- max(C - ceil(D*L/W), 0): the quotient is compared before it is taken,
    -- since a clock gone far back makes it larger than 2^53.
    local avail = 0
    if bcmp(dl, bmul(P.C, P.W)) < 0 then
      avail = P.C - bdivceil(dl, P.W)
    end
    d.r = avail
    d.rs = bdivceil(dl, P.L)
    if avail < P.C then
      d.nx = bucketWait(P, dl, avail + 1)
    end
    return d, c
  end

  local function queueAvail(P, dl)
    if bcmp(P.ml, dl) < 0 then return 0 end
    local q = bdivmod(bsub(P.ml, dl), P.W)
    return q + 1
  end

  -- queueWait: w*L >= (m-1)*W + D*L - MaxDelay*L.
  local function queueWait(P, dl, m)
    local need = badd(bmul(m - 1, P.W), dl)
    if bcmp(P.ml, need) >= 0 then return 0 end
    return bdivceil(bsub(need, P.ml), P.L)
  end

  local function leakyQueue(P, c, off, n, consume)
    local d = newDecision(P.C)
    if not P.ml then P.ml = bmul(P.md, P.L) end
    local dl = deficit(P, c)
    if bcmp(dl, P.ml) > 0 then
      d.ra = queueWait(P, dl, 1)
    elseif consume then
      d.a = true
      d.dl = bdivceil(dl, P.L)
      c = advance(P, c, n)
      dl = deficit(P, c)
    else
      d.a = true
    end
    d.r = queueAvail(P, dl)
    d.rs = bdivceil(dl, P.L)
    if d.r < P.C then
      d.nx = queueWait(P, dl, d.r + 1)
    end
    return d, c
  end

  local function encodeBucket(P, c)
    local s, ns = absol(c.t)
    return format('%d %d %d', s, ns, c.x)
  end
  bucketKinds_ = {load = loadBucket, token = tokenBucket, queue = leakyQueue, encode = encodeBucket}
  return bucketKinds_
end
