-- cluster.lua: undoing a reservation, for a Take whose checks span several
-- Redis Cluster slots (see doc.go, "Cluster"). A reservation (mode 1) is a
-- normal decision that also returns, for every key it wrote, what undoing
-- the write needs; undo (mode 2) then takes the reservation's units back.
--
-- The counting kinds are additive, so their undo subtracts exactly the
-- units the reservation added, whatever other requests did since:
--   "f" fixed_window:   a = window index, b = units
--   "w" sliding_window: a = window index, b = units
--   "b" sliding_buckets: a, b = the sub-window (w, b), c = Buckets, d = units
--   "l" sliding_log:    a, b = the instant (s, ns), c = units
-- The bucket kinds are not (an instant is max(F, t) + n*W/L), so their undo
-- restores the old value only if the key still holds what the reservation
-- wrote (compare and set); a key changed since keeps the consumption,
-- erring towards denying, never towards admitting:
--   "s" token_bucket, leaky_bucket, leaky_queue: a = old value ("" when absent), b = new
-- A record is 7 strings: tag, key, list key, a, b, c, d.

local undoKind_
local function undoKind()
  if undoKind_ then return undoKind_ end
  local function undoRecord(tag, key, lkey, a, b, c, d, out)
    out[#out + 1] = tag
    out[#out + 1] = key
    out[#out + 1] = lkey or ''
    out[#out + 1] = a or ''
    out[#out + 1] = b or ''
    out[#out + 1] = c or ''
    out[#out + 1] = d or ''
  end

  local function undoWindow(key, k, n, sliding)
    local v = redis.call('GET', key)
    if not v then return end
    local sk, x, y = string.match(v, '^(%-?%d+) (%d+) ?(%d*)$')
    if not sk then return end
    sk, x, y = tonumber(sk), tonumber(x), tonumber(y) or 0
    if sk == k then
      if sliding then y = math.max(y - n, 0) else x = math.max(x - n, 0) end
    elseif sliding and sk == k + 1 then
      x = math.max(x - n, 0)
    else
      return -- the units have left the window
    end
    local out = fmt(sk) .. ' ' .. fmt(x)
    if sliding then out = out .. ' ' .. fmt(y) end
    redis.call('SET', key, out, 'KEEPTTL')
  end

  local function undoBuckets(key, w, b, B, n)
    local v = redis.call('GET', key)
    if not v then return end
    local S = bucketsKind().load({jw = 0, jb = 0}, key)
    local age = (S.w - w) * B + (S.b - b)
    if S.w - w > 2 or age < 0 or age >= B then return end
    local c = S.counts[b] or 0
    local take = math.min(c, n)
    S.counts[b] = c - take
    S.sum = S.sum - take
    redis.call('SET', key, bucketsKind().encode(S), 'KEEPTTL')
  end

  local function undoLog(key, lkey, s, ns, n)
    local len = redis.call('LLEN', lkey)
    local i = -1
    while -i <= len do
      local item = redis.call('LINDEX', lkey, i)
      local es, ens, en = string.match(item or '', '^(%-?%d+) (%d+) (%d+)$')
      if not es then return end
      es, ens, en = tonumber(es), tonumber(ens), tonumber(en)
      if es < s or (es == s and ens < ns) then return end
      if es == s and ens == ns then
        local take = math.min(en, n)
        if en - take > 0 then
          redis.call('LSET', lkey, i, fmt(es) .. ' ' .. fmt(ens) .. ' ' .. fmt(en - take))
        else
          redis.call('LSET', lkey, i, 'x')
          redis.call('LREM', lkey, 1, 'x')
        end
        local sum = tonumber(redis.call('GET', key) or '')
        if sum then
          redis.call('SET', key, fmt(math.max(sum - take, 0)), 'KEEPTTL')
        end
        return
      end
      i = i - 1
    end
  end

  local function applyUndo(base)
    local count = tonumber(ARGV[base])
    if not count then
      return redis.error_reply('redisstore: malformed undo records')
    end
    for r = 0, count - 1 do
      local a = base + r * 7
      local tag, key, lkey = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
      local A, B, C, D = ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]
      if tag == 's' then
        if redis.call('GET', key) == B then
          if A == '' then
            redis.call('DEL', key)
          else
            redis.call('SET', key, A, 'KEEPTTL')
          end
        end
      elseif tag == 'f' or tag == 'w' then
        undoWindow(key, tonumber(A), tonumber(B), tag == 'w')
      elseif tag == 'b' then
        undoBuckets(key, tonumber(A), tonumber(B), tonumber(C), tonumber(D))
      elseif tag == 'l' then
        undoLog(key, lkey, tonumber(A), tonumber(B), tonumber(C))
      end
    end
    return nil
  end
  undoKind_ = {record = undoRecord, apply = applyUndo}
  return undoKind_
end
