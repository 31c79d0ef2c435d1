-- cell.lua: the kinds whose state is an instant and up to two counts,
-- mirroring algorithms/cell.go, fixed_window.go, sliding_window.go,
-- token_bucket.go and leaky_queue.go line by line.
--
-- Stored values (SET key value PX ttl):
--   fixed_window:   "k x"      window index k = floor(t/W) (< 2^53), count x
--   sliding_window: "k x y"    window index, count of k-1, count of k
--   token_bucket, leaky_bucket, leaky_queue: "s n x", the instant F = s*10^9+n
--                   plus x/L ns (the bucket full, the queue free)
-- A cross-slot reservation's write follows the state with "|" and records
-- its undo reads (cluster.lua); the kinds read the state (reservedState).
-- In the script, the instant of the bucket kinds is held relative to t.
-- The steps the fast path takes too (slidingWait, deficitOf, advanceBy,
-- bucketWait, queueWait, ...) are fastlib.lua's, defined once for both.
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
      if not k then
        local h = reservedState(v)
        if h then k, x, y = match(h, '^(%-?%d+) (%d+) ?(%d*)$') end
        if not k then foreign(key) end
      end
      x, y = tonumber(x), tonumber(y) or 0
      -- The store never counts past the highest limit a check can be
      -- judged at (MAXCOUNT: a check judged above its Spec's limit counts
      -- past C), and a count past 2^53 is not even exact.
      if x > MAXCOUNT or y > MAXCOUNT then foreign(key) end
      return {t = tonumber(k), x = x, y = y}, true
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
    d.r = max(L - count, 0) -- a check judged at L may find more (counted at a higher limit)
    if count > 0 then
      d.rs = ending
      d.nx = ending
    end
    return d, c
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
      d.ra = slidingWait(W, L, prev, curr, e, n)
    end
    d.r = max(avail, 0)
    if curr > 0 then
      d.rs = 2 * W - e
    elseif prev > 0 then
      d.rs = W - e
    end
    if d.r < L then
      d.nx = slidingWait(W, L, prev, curr, e, d.r + 1)
    end
    return d, c
  end

  -- chargeWindow returns the state c would have after cost n is counted
  -- where the kind decides (the key's window when off > 0), whether or
  -- not it fits: a check after a denied one on its key in one Take is
  -- decided as if that one had been admitted (cell.go's chargeCell).
  local function chargeWindow(P, c, off, n)
    local k = P.k
    if off > 0 then k = c.t end
    if P.kind == 1 then
      if c.t ~= k then return {t = k, x = n, y = 0} end
      return {t = k, x = c.x + n, y = 0}
    end
    if c.t == k then return {t = k, x = c.x, y = c.y + n} end
    if c.t == k - 1 then return {t = k, x = c.y, y = n} end
    return {t = k, x = 0, y = n}
  end

  local function encodeWindow(P, c)
    if P.kind == 1 then
      return format('%d %d', c.t, c.x)
    end
    return format('%d %d %d', c.t, c.x, c.y)
  end
  windowKinds_ = {load = loadWindow, late = lateWindow, fixed = fixedWindow, sliding = slidingWindow, charge = chargeWindow, encode = encodeWindow}
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
      if not s then
        local h = reservedState(v)
        if h then s, ns, x = match(h, '^(%-?%d+) (%d+) (%d+)$') end
      end
      if s then
        s, ns, x = tonumber(s), tonumber(ns), tonumber(x)
        -- The store writes whole ns below 10^9 and a remainder below L.
        if ns >= G or x >= P.L then foreign(key) end
        if not far(s) then
          return {t = rel(s, ns), x = x}, true
        end
        -- F more than 23 days before t: the bucket is full (exactly as in
        -- algorithms: the deficit is zero). See doc.go for F far after t.
      else
        foreign(key)
      end
    end
    return {t = 0, x = 0}, false
  end

  -- advance returns the state after admitting cost n: F = max(F, t) + n*W/L.
  local function advance(P, c, n)
    local ft, fx = advanceBy(c.t, c.x, P.L, bdivmod(bmul(n, P.W), P.L))
    return {t = ft, x = fx}
  end

  -- tokenFast is tokenBucket when C*W and D*L are below 2^52: the same
  -- steps on plain numbers (after admitting n, D*L is at most C*W).
  local function tokenFast(P, c, n, consume, CW, dl)
    local L, W, C = P.L, P.W, P.C
    local d = newDecision(C)
    d.a = dl <= (C - n) * W
    if d.a and consume then
      local ft, fx = advanceBy(c.t, c.x, L, divmod(n * W, L))
      c = {t = ft, x = fx}
      dl = ft * L + fx
    elseif not d.a then
      d.ra = bucketWaitPlain(C, W, L, dl, n)
    end
    local avail = 0
    if dl < CW then avail = C - ceilDiv(dl, W) end
    d.r = avail
    d.rs = ceilDiv(dl, L)
    if avail < C then d.nx = bucketWaitPlain(C, W, L, dl, avail + 1) end
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
    local dl = deficitOf(c.t, c.x, P.L)
    -- n tokens are there when C - ceil(D*L/W) >= n, that is D*L <= (C-n)*W.
    d.a = bcmp(bmul(P.C - n, P.W), dl) >= 0
    if d.a and consume then
      c = advance(P, c, n)
      dl = deficitOf(c.t, c.x, P.L)
    elseif not d.a then
      d.ra = bucketWait(P.C, P.W, P.L, dl, n)
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
      d.nx = bucketWait(P.C, P.W, P.L, dl, avail + 1)
    end
    return d, c
  end

  local function leakyQueue(P, c, off, n, consume)
    local d = newDecision(P.C)
    if not P.ml then P.ml = bmul(P.md, P.L) end
    local dl = deficitOf(c.t, c.x, P.L)
    if bcmp(dl, P.ml) > 0 then
      d.ra = queueWait(P.ml, P.W, P.L, dl, 1)
    elseif consume then
      d.a = true
      d.dl = bdivceil(dl, P.L)
      c = advance(P, c, n)
      dl = deficitOf(c.t, c.x, P.L)
    else
      d.a = true
    end
    d.r = queueAvail(P.ml, P.W, dl)
    d.rs = bdivceil(dl, P.L)
    if d.r < P.C then
      d.nx = queueWait(P.ml, P.W, P.L, dl, d.r + 1)
    end
    return d, c
  end

  local function encodeBucket(P, c)
    local s, ns = absol(c.t)
    return format('%d %d %d', s, ns, c.x)
  end
  bucketKinds_ = {load = loadBucket, token = tokenBucket, queue = leakyQueue, charge = advance, encode = encodeBucket}
  return bucketKinds_
end
