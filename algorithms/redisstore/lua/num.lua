-- num.lua: exact integer arithmetic on Lua doubles, and the time.
--
-- Lua numbers are IEEE doubles: integers are exact below 2^53. Every plain
-- number in these scripts stays below 2^52 in magnitude (see the proof in
-- doc.go); products that can exceed it (Limit*Window reaches 8.64e22) are
-- held as "big" numbers: arrays of base-2^24 limbs, least significant first.

local G = 1000000000        -- ns per second
local T24 = 16777216        -- 2^24
local T52 = 4503599627370496 -- 2^52
local HEX = {1, 16, 256, 4096, 65536, 1048576}

-- divmod returns floor(a/b) and a - b*floor(a/b) for integers |a| < 2^52,
-- 0 < b < 2^52. floor(fl(a/b)) is floor(a/b) or one more (rounding is
-- monotone and both neighbours are representable), q*b is exact, and one
-- correction step fixes the quotient.
local function divmod(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then
    q = q - 1; r = r + b
  elseif r >= b then
    q = q + 1; r = r - b
  end
  return q, r
end

-- big returns x (0 <= x < 2^53) as limbs. Division by 2^24 is exact.
local function big(x)
  local l0 = x % T24
  x = (x - l0) / T24
  local l1 = x % T24
  return {l0, l1, (x - l1) / T24}
end

-- norm propagates carries so that every limb is below 2^24. Each limb on
-- entry is a non-negative integer below 2^52.
local function norm(c)
  local carry = 0
  for i = 1, #c do
    local v = c[i] + carry
    local lo = v % T24
    c[i] = lo
    carry = (v - lo) / T24
  end
  while carry > 0 do
    local lo = carry % T24
    c[#c + 1] = lo
    carry = (carry - lo) / T24
  end
  return c
end

-- bmul returns a*b for integers 0 <= a, b < 2^53: limb products are below
-- 2^48, and a column sums at most three of them (below 2^50).
local function bmul(a, b)
  local A, B = big(a), big(b)
  local c = {0, 0, 0, 0, 0, 0}
  for i = 1, 3 do
    local ai = A[i]
    if ai ~= 0 then
      for j = 1, 3 do
        c[i + j - 1] = c[i + j - 1] + ai * B[j]
      end
    end
  end
  return norm(c)
end

-- badd returns X+Y.
local function badd(X, Y)
  local c = {}
  for i = 1, math.max(#X, #Y) do
    c[i] = (X[i] or 0) + (Y[i] or 0)
  end
  return norm(c)
end

-- bsub returns X-Y for X >= Y.
local function bsub(X, Y)
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
  return c
end

-- bcmp returns -1, 0 or 1 as X <, = or > Y.
local function bcmp(X, Y)
  for i = math.max(#X, #Y), 1, -1 do
    local x, y = X[i] or 0, Y[i] or 0
    if x < y then return -1 end
    if x > y then return 1 end
  end
  return 0
end

local function bzero(X)
  for i = 1, #X do
    if X[i] ~= 0 then return false end
  end
  return true
end

-- bdivmod returns floor(X/d) and X mod d for 0 < d < 2^48; the quotient must
-- be below 2^53. Values below 2^52 divide directly; larger ones by long
-- division in base 16: the running remainder is below d, so r*16+15 < 2^52.
local function bdivmod(X, d)
  local n = #X
  while n > 1 and X[n] == 0 do n = n - 1 end
  if n <= 2 or (n == 3 and X[3] < 16) then
    return divmod(X[1] + (X[2] or 0) * T24 + (X[3] or 0) * 281474976710656, d)
  end
  local q, r = 0, 0
  for i = n, 1, -1 do
    local limb = X[i]
    for s = 6, 1, -1 do
      local p = HEX[s]
      local dig = math.floor(limb / p) % 16
      r = r * 16 + dig
      local qd = 0
      if r >= d then qd, r = divmod(r, d) end
      q = q * 16 + qd
    end
  end
  return q, r
end

local function bdivceil(X, d)
  local q, r = bdivmod(X, d)
  if r > 0 then q = q + 1 end
  return q
end

-- mulDivFloor / mulDivCeil return floor(a*b/d) / ceil(a*b/d) for
-- 0 <= a, b < 2^53 and 0 < d < 2^48 when the quotient is below 2^53.
local function mulDivFloor(a, b, d)
  local p = a * b
  if p < T52 then return (divmod(p, d)) end -- fl(a*b) < 2^52 implies a*b exact
  return (bdivmod(bmul(a, b), d))
end

local function mulDivCeil(a, b, d)
  local p = a * b
  if p < T52 then
    local q, r = divmod(p, d)
    if r > 0 then q = q + 1 end
    return q
  end
  return bdivceil(bmul(a, b), d)
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

-- window returns k = floor(t/W) and e = t - k*W for 0 < W <= 8.64e13.
-- k is below 2^53 because W >= 10^6 ns.
local function window(W)
  if W % G == 0 then -- whole seconds: exact on TS alone
    local q, r = divmod(TS, W / G)
    return q, r * G + TN
  end
  if G % W == 0 then -- divides a second
    local q, r = divmod(TN, W)
    return TS * (G / W) + q, r
  end
  if TS >= 0 then
    return bdivmod(badd(bmul(TS, G), big(TN)), W)
  end
  -- t < 0: -t = (-TS-1)*G + (G-TN) and floor(t/W) = -ceil(-t/W).
  local q, r = bdivmod(badd(bmul(-TS - 1, G), big(G - TN)), W)
  if r == 0 then return -q, 0 end
  return -q - 1, W - r
end

local function fmt(x) return string.format('%d', x) end
