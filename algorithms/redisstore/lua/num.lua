-- num.lua: exact integer arithmetic on Lua doubles, and the time.
--
-- Lua numbers are IEEE doubles: integers are exact below 2^53. Every plain
-- number in these scripts stays below 2^52 in magnitude (see the proof in
-- doc.go); products that can exceed it (Limit*Window reaches 8.64e22) are
-- held as "big" numbers: arrays of base-2^24 limbs, least significant first.

local G = 1000000000        -- ns per second
local T24 = 16777216        -- 2^24
local T52 = 4503599627370496 -- 2^52
-- MAXCOUNT is algorithms.MaxLimit, the highest limit a check can be
-- judged at (its Spec's, or its Check.Limit, which may be above the
-- Spec's for fixed_window, sliding_window and sliding_buckets): a window
-- kind admits only while its count stays within the limit judged at, so
-- no count the store writes passes it, whatever its Spec's limit.
local MAXCOUNT = 1000000000

-- divmod returns floor(a/b) and a - b*floor(a/b) for integers |a| < 2^52,
-- 0 < b < 2^52. Lua's a % b is a - floor(fl(a/b))*b; floor(fl(a/b)) is
-- floor(a/b) or one more (rounding is monotone and both neighbours are
-- representable), its product with b is below 2^53 and so exact, and so is
-- the difference: the remainder, or it minus b, which one step corrects.
-- a - r is then an exact multiple of b, and the quotient exact. (The %
-- operator is one VM instruction; math.floor would be a call.)
local function divmod(a, b)
  local r = a % b
  if r < 0 then
    r = r + b
  elseif r >= b then
    r = r - b
  end
  return (a - r) / b, r
end

-- The instant of the call, t = TS*10^9 + TN with 0 <= TN < 10^9 (TS may be
-- negative, before 1970). Stored instants are kept as such pairs and used
-- relative to t.
local TS, TN = 0, 0

-- rel returns the stored instant (s, n) minus t, in ns. Exact for
-- |s - TS| <= 2*10^6 s (23 days), which callers check with far first.
local function rel(s, n)
  return (s - TS) * G + (n - TN)
end

-- far reports whether (s, n) is more than 2*10^6 s from t: then it is
-- older (or newer) than anything a state can depend on (24 h at most).
local function far(s)
  return s - TS > 2000000 or TS - s > 2000000
end

-- absol returns t + d (|d| < 2^51) as a pair.
local function absol(d)
  local q, r = divmod(TN + d, G)
  return TS + q, r
end

-- ttlArg returns an expiry in ms (an integer below 2^53) as the string
-- redis.call passes on. Given a number, Redis 7.0's scripting formats the
-- argument itself with C's %.17g, which costs a SET about 0.9 µs of server
-- time; formatting it here costs a tenth of that, and each distinct value
-- is formatted once while the table lives (the library's lifetime as a
-- function, one call as a script; bounded like spec.lua's).
local TTLS, nttls = {}, 0
local function ttlArg(ms)
  local s = TTLS[ms]
  if s then return s end
  s = format('%d', ms)
  if nttls >= 1024 then TTLS, nttls = {}, 0 end
  TTLS[ms] = s
  nttls = nttls + 1
  return s
end

-- The wide-value helpers and window are created by numInit, on first use:
-- a script's functions are closures made anew on every call, and the fast
-- path (fast.lua) needs none of them in the common case.
local big, norm, bmul, limbs, badd, bsub, bcmp, bdivmod, bdivceil, mulDivFloor, mulDivCeil, window, fmt
local function numInit()
  if bmul then return end
  -- Wide values. A wide value is a plain number when it is below 2^52, and
  -- otherwise an array of base-2^24 limbs, least significant first, whose
  -- value is at least 2^52 (the two forms never overlap, so comparing forms
  -- compares values). Products of two plain numbers take the array form only
  -- when they need it, so small limits and windows never allocate.

  -- big returns x (0 <= x < 2^53) as limbs. Division by 2^24 is exact.
  function big(x)
    local l0 = x % T24
    x = (x - l0) / T24
    local l1 = x % T24
    return {l0, l1, (x - l1) / T24}
  end

  -- norm propagates carries so that every limb is below 2^24 (each limb on
  -- entry is a non-negative integer below 2^52), and returns a plain number
  -- when the value is below 2^52.
  function norm(c)
    local carry = 0
    local n = #c
    for i = 1, n do
      local v = c[i] + carry
      local lo = v % T24
      c[i] = lo
      carry = (v - lo) / T24
    end
    while carry > 0 do
      local lo = carry % T24
      n = n + 1
      c[n] = lo
      carry = (carry - lo) / T24
    end
    while n > 1 and c[n] == 0 do
      c[n] = nil
      n = n - 1
    end
    if n <= 2 or (n == 3 and c[3] < 16) then -- below 2^52
      return c[1] + (c[2] or 0) * T24 + (c[3] or 0) * 281474976710656
    end
    return c
  end

  -- bmul returns a*b for integers 0 <= a, b < 2^53. When fl(a*b) < 2^52 the
  -- product is exact (rounding is monotone and 2^52 is representable).
  -- Otherwise limb products are below 2^48, and a column sums at most three
  -- of them (below 2^50).
  function bmul(a, b)
    local p = a * b
    if p < T52 then return p end
    local a0 = a % T24
    local a1 = ((a - a0) / T24) % T24
    local a2 = (a - a0 - a1 * T24) / 281474976710656
    local b0 = b % T24
    local b1 = ((b - b0) / T24) % T24
    local b2 = (b - b0 - b1 * T24) / 281474976710656
    return norm({a0 * b0, a0 * b1 + a1 * b0, a0 * b2 + a1 * b1 + a2 * b0, a1 * b2 + a2 * b1, a2 * b2})
  end

  function limbs(X)
    if type(X) == 'number' then return big(X) end
    return X
  end

  -- badd returns X+Y.
  function badd(X, Y)
    if type(X) == 'number' and type(Y) == 'number' then
      local s = X + Y
      if s < T52 then return s end
    end
    X, Y = limbs(X), limbs(Y)
    local c = {}
    for i = 1, max(#X, #Y) do
      c[i] = (X[i] or 0) + (Y[i] or 0)
    end
    return norm(c)
  end

  -- bsub returns X-Y for X >= Y.
  function bsub(X, Y)
    if type(X) == 'number' then return X - Y end -- then Y <= X is a number too
    Y = limbs(Y)
    local c, borrow = {}, 0
    for i = 1, #X do
      local v = X[i] - (Y[i] or 0) - borrow
      if v < 0 then
        v = v + T24; borrow = 1
      else
        borrow = 0
      end
      c[i] = v
    end
    return norm(c)
  end

  -- bcmp returns -1, 0 or 1 as X <, = or > Y.
  function bcmp(X, Y)
    local nx, ny = type(X) == 'number', type(Y) == 'number'
    if nx and ny then
      if X < Y then return -1 end
      if X > Y then return 1 end
      return 0
    end
    if nx then return -1 end
    if ny then return 1 end
    for i = max(#X, #Y), 1, -1 do
      local x, y = X[i] or 0, Y[i] or 0
      if x < y then return -1 end
      if x > y then return 1 end
    end
    return 0
  end

  -- bdivmod returns floor(X/d) and X mod d for 0 < d < 2^48; the quotient
  -- must be below 2^53. A plain X divides directly. For limbs, q0 =
  -- floor(fl(X)/d) is within a few units of the quotient (fl(X) is within
  -- X*2^-50 of X, so q0 within q*2^-50 + 1 of q: a few units for the
  -- quotients below 2^52 taken here); q0*d is exact as limbs
  -- (q0 < 2^53, d < 2^48), and the remainder X - q0*d, summed limb by limb
  -- from the top, is exact: every partial sum is a multiple of 2^(24i) whose
  -- quotient by 2^(24i) is below 2^52 in magnitude, since the true remainder
  -- is below 8*d < 2^51 and the limbs below i add less than 2^(24i). The
  -- remainder then corrects q0.
  function bdivmod(X, d)
    if type(X) == 'number' then return divmod(X, d) end
    local n = #X
    local xf = 0
    for i = n, 1, -1 do xf = xf * T24 + X[i] end
    local q = floor(xf / d)
    local P = limbs(bmul(q, d))
    local r = 0
    for i = max(n, #P), 1, -1 do
      r = r * T24 + ((X[i] or 0) - (P[i] or 0))
    end
    while r < 0 do q = q - 1; r = r + d end
    while r >= d do q = q + 1; r = r - d end
    return q, r
  end

  function bdivceil(X, d)
    local q, r = bdivmod(X, d)
    if r > 0 then q = q + 1 end
    return q
  end

  -- mulDivFloor / mulDivCeil return floor(a*b/d) / ceil(a*b/d) for
  -- 0 <= a, b < 2^53 and 0 < d < 2^48 when the quotient is below 2^53.
  function mulDivFloor(a, b, d)
    return (bdivmod(bmul(a, b), d))
  end

  function mulDivCeil(a, b, d)
    return bdivceil(bmul(a, b), d)
  end

  -- window returns k = floor(t/W) and e = t - k*W for 0 < W <= 8.64e13.
  -- k is below 2^53 because W >= 10^6 ns.
  function window(W)
    if W % G == 0 then -- whole seconds: exact on TS alone
      local q, r = divmod(TS, W / G)
      return q, r * G + TN
    end
    if G % W == 0 then -- divides a second
      local q, r = divmod(TN, W)
      return TS * (G / W) + q, r
    end
    if TS >= 0 then
      return bdivmod(badd(bmul(TS, G), TN), W)
    end
    -- t < 0: -t = (-TS-1)*G + (G-TN) and floor(t/W) = -ceil(-t/W).
    local q, r = bdivmod(badd(bmul(-TS - 1, G), G - TN), W)
    if r == 0 then return -q, 0 end
    return -q - 1, W - r
  end

  function fmt(x) return format('%d', x) end
end
