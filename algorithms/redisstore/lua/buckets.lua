-- buckets.lua: sliding_buckets, mirroring algorithms/sliding_buckets.go.
--
-- Stored value: "w b sum i1 c1 i2 c2 ...": the newest sub-window seen is
-- w*Buckets + b (w = its window index, b in [0, Buckets)), sum the total of
-- the ring, and i/c the ring slots (sub-window index mod Buckets) holding a
-- non-zero count. Sub-window indices themselves can exceed 2^53 (a
-- sub-window can be 278 ns), so they are kept as the pair (w, b), both exact.

local bucketsKind_
local function bucketsKind()
  if bucketsKind_ then return bucketsKind_ end
  -- loadBuckets reads the ring at key. Only a value encodeBuckets can
  -- have written is the store's: "w b sum" and "slot count" pairs,
  -- integers, 0 <= b < Buckets, each slot in [0, Buckets) once with a
  -- count of at least 1, the counts summing to sum (below 2^52). Any other
  -- value fails the call as foreign: read as a ring, a negative sum or
  -- count would admit past the limit, and a sum no slot of the ring holds
  -- would make slidingBuckets look for its newest count for good.
  local function loadBuckets(P, key)
    local v = call('GET', key)
    if v then
      local w, b, sum, at = match(v, '^(%-?%d+) (%d+) (%d+)()')
      if not w then foreign(key) end
      w, b, sum = tonumber(w), tonumber(b), tonumber(sum)
      if b >= P.B or sum >= T52 then foreign(key) end
      local counts, left = {}, sum
      while at <= #v do
        local i, c, nxt = match(v, '^ (%d+) (%d+)()', at)
        if not i then foreign(key) end
        i, c = tonumber(i), tonumber(c)
        if i >= P.B or counts[i] or c < 1 or c > left then foreign(key) end
        counts[i], left, at = c, left - c, nxt
      end
      if left ~= 0 then foreign(key) end
      return {w = w, b = b, sum = sum, counts = counts}, true
    end
    return {w = P.jw, b = P.jb, sum = 0, counts = {}}, false
  end

  -- bucketsOff returns latest(t) - t: how far the newest sub-window's start
  -- is ahead of t.
  local function bucketsOff(P, S)
    local dw = S.w - P.jw
    if dw < 0 then return 0 end
    local delta = dw * P.B + (S.b - P.jb)
    if delta > 0 then
      return delta * P.sub - P.es -- below 2^51 unless the clock went back 26 days: see doc.go
    end
    return 0
  end

  -- rollBuckets moves the ring to t's sub-window (only when t is not late).
  local function rollBuckets(P, S, off)
    if off > 0 then return end
    local dw = P.jw - S.w
    local diff
    if dw >= 2 then
      diff = P.B + 1
    else
      diff = dw * P.B + (P.jb - S.b)
    end
    if diff <= 0 then return end
    S.dirty = true
    if diff >= P.B then
      S.counts = {}
      S.sum = 0
    else
      for i = 1, diff do
        local idx = (S.b + i) % P.B
        local c = S.counts[idx]
        if c then
          S.sum = S.sum - c
          S.counts[idx] = nil
        end
      end
    end
    S.w, S.b = P.jw, P.jb
  end

  local function cloneBuckets(S)
    local counts = {}
    for i, c in pairs(S.counts) do counts[i] = c end
    return {w = S.w, b = S.b, sum = S.sum, counts = counts}
  end

  local function commitBuckets(S, n)
    S.counts[S.b] = (S.counts[S.b] or 0) + n
    S.sum = S.sum + n
  end

  -- bucketsWait: the bucket last-B+i leaves the window when sub-window last+i
  -- begins, i*sub - es after tl.
  local function bucketsWait(P, S, es, m, extra)
    local sum = S.sum + extra
    if sum + m <= P.L then return 0 end
    -- Once every other bucket has left, the current one and extra remain:
    -- when they leave no room, skip the walk (see bucketsView.wait).
    if (S.counts[S.b] or 0) + extra + m > P.L then
      return P.B * P.sub - es
    end
    for i = 1, P.B - 1 do
      sum = sum - (S.counts[(S.b + i) % P.B] or 0)
      if sum + m <= P.L then
        return i * P.sub - es
      end
    end
    return P.B * P.sub - es
  end

  local function slidingBuckets(P, S, off, n, consume)
    local es = P.es
    if off > 0 then es = 0 end
    local d = newDecision(P.L)
    d.a = S.sum + n <= P.L
    local sum = S.sum
    if d.a and consume then
      sum = sum + n
    elseif not d.a then
      d.ra = bucketsWait(P, S, es, n, 0)
    end
    d.r = max(P.L - sum, 0)
    if sum > 0 then
      local newest = 0
      if not d.a or not consume then
        -- sum > 0 (loadBuckets checks that the counts sum to it): a slot
        -- counts. Bounded all the same, as in slidingBuckets.decide.
        while newest > 1 - P.B and (S.counts[(S.b + newest) % P.B] or 0) == 0 do
          newest = newest - 1
        end
      end
      d.rs = (newest + P.B) * P.sub - es
    end
    if d.r < P.L then
      local extra = 0
      if d.a and consume then extra = n end
      d.nx = bucketsWait(P, S, es, d.r + 1, extra)
    end
    return d
  end

  local function encodeBuckets(S)
    local parts = {fmt(S.w), fmt(S.b), fmt(S.sum)}
    for i, c in pairs(S.counts) do
      if c > 0 then
        parts[#parts + 1] = fmt(i)
        parts[#parts + 1] = fmt(c)
      end
    end
    return table.concat(parts, ' ')
  end
  bucketsKind_ = {load = loadBuckets, off = bucketsOff, roll = rollBuckets, clone = cloneBuckets, commit = commitBuckets, decide = slidingBuckets, encode = encodeBuckets}
  return bucketsKind_
end
