-- refund.lua: giving back leaky_queue places (algorithms.Refunder, mode 4).
-- Mirrors algorithms/leaky_queue.go refundQueue: a check's place is given
-- back when it is the queue's last: its departure N - n*W/L is within half
-- a spacing W/(2L) of t + rem (rem, the caller's remaining wait); N then
-- moves back by n*W/L, or to t (an empty queue) when less than that is
-- left. Any other state is kept.
--
-- ARGV after the checks (main.lua's wide layout): one rem per check, in ns.
-- The checks are all leaky_queue, the last refunded first (the caller
-- orders them).

local function refundQueue(key, L, W, n, rem, minTTL)
  local v = call('GET', key)
  local s, ns, x = match(v or '', '^(%-?%d+) (%d+) (%d+)$')
  if not s then return end
  s = tonumber(s)
  if far(s) then return end
  local ft, fx = rel(s, tonumber(ns)), tonumber(x) -- N - t = ft + fx/L ns
  local dl = deficitOf(ft, fx, L)
  if dl == 0 then return end -- the queue is empty: nothing is held
  local nw = bmul(n, W)
  -- The last place: 2*dl <= 2*n*W + W + 2*rem*L (rem >= 0), or
  -- 2*dl + 2*|rem|*L <= 2*n*W + W (rem < 0).
  local lhs, rhs = badd(dl, dl), badd(bmul(2 * n, W), W)
  if rem >= 0 then
    rhs = badd(rhs, bmul(2 * rem, L))
  else
    lhs = badd(lhs, bmul(-2 * rem, L))
  end
  if bcmp(rhs, lhs) < 0 then return end
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
  call('SET', key, format('%d %d %d', as, ans, fx), 'PX', ttlArg(max(floor(rs / 1000000) + 1, minTTL, 1)))
end

local function refundQueues(nchecks, minTTL)
  if #ARGV ~= 5 + nchecks * 8 or #KEYS ~= nchecks then
    return redis.error_reply('redisstore: malformed refund')
  end
  for i = 1, nchecks do
    local a = 5 + (i - 1) * 7
    local kind, L, W, n = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 7])
    local rem = tonumber(ARGV[5 + nchecks * 7 + i])
    if not (kind == 7 and L and W and n and rem) then
      return redis.error_reply('redisstore: malformed refund of check ' .. i)
    end
    refundQueue(KEYS[i], L, W, n, rem, minTTL)
  end
  return 0
end
