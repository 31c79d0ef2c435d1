-- fastlib.lua: the fast path's decisions (fast.lua runs them). Run as a
-- function (FCALL) these closures are made once, when the library loads;
-- run as a script, on each call.

local FS = 14 -- the fields per check in fast.lua's table f

-- The fast path's tables, made by fastTables at their size (a table that
-- grows is reallocated at every power of two: garbage, which the
-- collector then pays for). As a function they are made once, for the
-- most checks seen, and reused by every call: each call writes every field
-- it reads (out is cut after its replies by fast.lua).
local fastF, fastOut, fastSpecs, fastCap = nil, nil, nil, 0

-- The seconds of the server's last TIME, as its reply's string and as a
-- number: calls within one second parse them once (strings are interned,
-- so comparing them is cheap).
local timeSecS, timeSec = nil, 0

local function fastTables(n)
  if n <= fastCap then return end
  if n == 1 then
    fastF, fastOut = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}
  elseif n == 2 then
    fastF = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    fastOut = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
  elseif n <= 4 then
    fastF = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    fastOut = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
    n = 4
  else
    fastF, fastOut = {}, {}
  end
  fastSpecs = {}
  fastCap = n
end

-- slidingWaitFast is slidingWait (cell.lua) for the fast path: plain
-- numbers when small (L*W < 2^52, so every product is a count at most L
-- times a duration at most W), wide values otherwise.
local function slidingWaitFast(small, W, L, prev, curr, e, m)
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

-- queueWaitFast is queueWait (cell.lua): the wait w with
-- w*L >= (m-1)*W + D*L - MaxDelay*L, for dl = D*L and ml = MaxDelay*L.
local function queueWaitFast(ml, W, L, dl, m)
  local need = badd(bmul(m - 1, W), dl)
  if bcmp(ml, need) >= 0 then return 0 end
  return bdivceil(bsub(need, ml), L)
end

-- decideFast decides check i on its loaded state in f (fast.lua) into
-- out, and, when consuming an admitted check, its new state into f. It returns whether
-- the check is admitted, or nil to give up the fast path.
local function decideFast(f, out, i, consume)
  local b = (i - 1) * FS
  local kind, L, W, C, n = f[b + 1], f[b + 2], f[b + 3], f[b + 4], f[b + 5]
  local t, x, off = f[b + 8], f[b + 9], f[b + 11]
  local allowed, r, ra, rs, nx, delay = false, 0, 0, 0, 0, 0
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
  elseif kind == 7 then
    -- leakyQueue (cell.lua) on the wide-value helpers, which stay plain
    -- numbers while they can: its arithmetic, step by step. f[b + 6] is
    -- MaxDelay*L (fast.lua).
    numInit()
    local ml = f[b + 6]
    local dlw = 0
    if t > 0 or (t == 0 and x > 0) then dlw = badd(bmul(t, L), x) end
    if bcmp(dlw, ml) > 0 then
      ra = queueWaitFast(ml, W, L, dlw, 1)
    else
      allowed = true
      if consume then
        delay = bdivceil(dlw, L)
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
      end
    end
    if bcmp(ml, dlw) >= 0 then r = bdivmod(bsub(ml, dlw), W) + 1 end
    rs = bdivceil(dlw, L)
    if r < C then nx = queueWaitFast(ml, W, L, dlw, r + 1) end
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
        ra = slidingWaitFast(small, W, L, prev, curr, e, n)
      end
      r = max(avail, 0)
      if curr > 0 then
        rs = 2 * W - e
      elseif prev > 0 then
        rs = W - e
      end
      if r < L then nx = slidingWaitFast(small, W, L, prev, curr, e, r + 1) end
    end
    if off > 0 then -- later
      if not allowed then ra = ra + off end
      if rs > 0 then rs = rs + off end
      if nx > 0 then nx = nx + off end
    end
  end
  local o = (i - 1) * 6
  out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5], out[o + 6] = allowed and 1 or 0, r, ra, rs, nx, delay
  return allowed
end
