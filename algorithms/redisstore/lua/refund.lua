-- refund.lua: giving back leaky_queue places (algorithms.Refunder, mode 4).
-- Mirrors algorithms/leaky_queue.go refundQueue: a check's place is given
-- back when it is the queue's last: its departure N - n*W/L is within half
-- a spacing W/(2L) of t + rem (rem, the caller's remaining wait); N then
-- moves back by n*W/L, or to t (an empty queue) when less than that is
-- left. Any other state is kept. Then each queue is looked at, as
-- algorithms/memory.go lookQueue does: the decision of its check at t
-- without consuming (algorithms.Refunded).
--
-- ARGV after the checks (main.lua's wide layout): one rem per check, in ns,
-- or 'n' for a check whose place is not to be given back (a denied Take).
-- The checks are all leaky_queue, the last refunded first (the caller
-- orders them).
-- Reply: 6 integers per check, in ARGV's order: allowed (0/1), Remaining,
-- RetryAfter, ResetAfter, NextAfter, given (0/1).

-- loadQueue returns the queue's state at key as bucketKinds' load does (a
-- state far from t is an empty queue) and whether the key holds one.
local function loadQueue(key)
  local v = call('GET', key)
  if not v then return {t = 0, x = 0}, false end
  local s, ns, x = match(reservedState(v) or v, '^(%-?%d+) (%d+) (%d+)$')
  s = tonumber(s)
  if far(s) then return {t = 0, x = 0}, false end
  return {t = rel(s, tonumber(ns)), x = tonumber(x)}, true
end

-- refundQueue gives back the place; it reports whether it did.
local function refundQueue(key, L, W, n, rem, minTTL)
  local c, held = loadQueue(key)
  if not held then return false end
  local ft, fx = c.t, c.x -- N - t = ft + fx/L ns
  local dl = deficitOf(ft, fx, L)
  if dl == 0 then return false end -- the queue is empty: nothing is held
  local nw = bmul(n, W)
  -- The last place: 2*dl <= 2*n*W + W + 2*rem*L (rem >= 0), or
  -- 2*dl + 2*|rem|*L <= 2*n*W + W (rem < 0).
  local lhs, rhs = badd(dl, dl), badd(bmul(2 * n, W), W)
  if rem >= 0 then
    rhs = badd(rhs, bmul(2 * rem, L))
  else
    lhs = badd(lhs, bmul(-2 * rem, L))
  end
  if bcmp(rhs, lhs) < 0 then return false end
  if bcmp(nw, dl) >= 0 then
    -- What is left of the place is all the queue held: the queue is free
    -- from t, which the key keeps (as the memory store's cell does) for a
    -- later instant before t, one from a clock a little behind, whose
    -- request would otherwise depart in the part of the place gone by.
    ft, fx = 0, 0
  else
    local q, r = bdivmod(nw, L)
    ft, fx = ft - q, fx - r
    if fx < 0 then
      fx = fx + L
      ft = ft - 1
    end
  end
  local rs = bdivceil(deficitOf(ft, fx, L), L)
  local as, ans = absol(ft)
  call('SET', key, format('%d %d %d', as, ans, fx), 'PX', ttlArg(max(floor((rs + 999999) / 1000000) + 1, minTTL, 1)))
  return true
end

local function refundQueues(nchecks, minTTL)
  if #ARGV ~= 5 + nchecks * 8 or #KEYS ~= nchecks then
    return redis.error_reply('redisstore: malformed refund')
  end
  local P, ns, rems = {}, {}, {}
  for i = 1, nchecks do
    local a = 5 + (i - 1) * 7
    local p = {
      kind = tonumber(ARGV[a + 1]), L = tonumber(ARGV[a + 2]), W = tonumber(ARGV[a + 3]),
      C = tonumber(ARGV[a + 4]), md = tonumber(ARGV[a + 6]),
    }
    local n = tonumber(ARGV[a + 7])
    local rem = ARGV[5 + nchecks * 7 + i]
    if rem ~= 'n' then rem = tonumber(rem) end
    if not (p.kind == 7 and p.L and p.W and p.C and p.md and n and rem) then
      return redis.error_reply('redisstore: malformed refund of check ' .. i)
    end
    -- A value the store did not write fails the call before any write,
    -- as a Take's does.
    local v = call('GET', KEYS[i])
    if v then
      local _, vns, vx = match(reservedState(v) or v, '^(%-?%d+) (%d+) (%d+)$')
      -- Numbers the store never writes too, as loadBucket fails on.
      if not vns or tonumber(vns) >= G or tonumber(vx) >= p.L then foreign(KEYS[i]) end
    end
    P[i], ns[i], rems[i] = p, n, rem
  end
  local given = {}
  for i = 1, nchecks do
    if rems[i] ~= 'n' then
      given[i] = refundQueue(KEYS[i], P[i].L, P[i].W, ns[i], rems[i], minTTL)
    end
  end
  local out = {}
  for i = 1, nchecks do
    local d = bucketKinds().queue(P[i], loadQueue(KEYS[i]), 0, ns[i], false)
    local b = (i - 1) * 6
    out[b + 1] = d.a and 1 or 0
    out[b + 2] = d.r
    out[b + 3] = d.ra
    out[b + 4] = d.rs
    out[b + 5] = d.nx
    out[b + 6] = given[i] and 1 or 0
  end
  return out
end
