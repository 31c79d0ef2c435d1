-- mainlib.lua: the general path's helpers (main.lua runs them). Run as a
-- function (FCALL) these closures are made once, when the library loads;
-- run as a script, on each call. windows is reset by main.lua on each call.

local FIXED, LOG, SLIDING, BUCKETS, TOKEN, LEAKY, QUEUE = 1, 2, 3, 4, 5, 6, 7
local FAR = 2251799813685248 -- 2^51 ns, 26 days

local windows = {} -- W -> {k, e}, computed once per call (main.lua resets it)
local function windowOf(W)
  local w = windows[W]
  if not w then
    local k, e = window(W)
    w = {k, e}
    windows[W] = w
  end
  return w[1], w[2]
end

local function later(d, off)
  if not d.a then d.ra = d.ra + off end
  if d.rs > 0 then d.rs = d.rs + off end
  if d.nx > 0 then d.nx = d.nx + off end
  if d.dl > 0 then d.dl = d.dl + off end
end

-- decide decides op on its state (op.c for cells, op.S otherwise).
local function decide(op, consume)
  local P = op.P
  local kind = P.kind
  local d
  if kind == FIXED then
    d, op.nc = windowKinds().fixed(P, op.c, op.off, op.n, consume)
  elseif kind == SLIDING then
    d, op.nc = windowKinds().sliding(P, op.c, op.off, op.n, consume)
  elseif kind == TOKEN or kind == LEAKY then
    d, op.nc = bucketKinds().token(P, op.c, op.off, op.n, consume)
  elseif kind == QUEUE then
    d, op.nc = bucketKinds().queue(P, op.c, op.off, op.n, consume)
  elseif kind == LOG then
    d = logKind().decide(P, op.S, op.off, op.n, consume)
  else
    d = bucketsKind().decide(P, op.S, op.off, op.n, consume)
  end
  if op.ahead and not d.a then
    -- A denied check after others on its key (pending.go's decide).
    if kind == FIXED then
      d.r = max(d.r, 0) -- a denied earlier one, counted, may pass the limit
    elseif kind == SLIDING then
      -- The wait of one check of the combined cost on the state before
      -- the earlier ones: a retry counts them again in its own window
      -- (sliding_window.go's slidingRepeat; NextAfter is reckoned in
      -- full here already).
      local e = P.e
      if op.off > 0 then e = 0 end
      d.ra = slidingWait(P.W, P.L, op.nc.x, op.nc.y - op.ahead, e, op.n + op.ahead)
    end
  end
  if op.off > 0 then later(d, op.off) end
  op.d = d
end

local function load(op)
  local P = op.P
  local kind = P.kind
  if kind == FIXED or kind == SLIDING then
    op.c = windowKinds().load(P, op.key)
    op.off = windowKinds().late(P, op.c)
    if op.off > FAR then -- a state more than 26 days ahead: see doc.go
      op.c, op.off = {t = P.k - 2, x = 0, y = 0}, 0
    end
  elseif kind == LOG then
    local M = logKind()
    op.S, op.exists = M.load(P, op.key, op.lkey, op.ro)
    op.off = M.latestOff(op.S)
    M.prune(P, op.S, op.off)
  elseif kind == BUCKETS then
    local M = bucketsKind()
    op.S, op.exists = M.load(P, op.key)
    op.off = M.off(P, op.S)
    if op.off > FAR then -- a state more than 26 days ahead: see doc.go
      op.S, op.off = {w = P.jw, b = P.jb, sum = 0, counts = {}}, 0
    end
    M.roll(P, op.S, op.off)
  else
    op.c = bucketKinds().load(P, op.key)
    op.off = 0
  end
end

-- follow sets op's state to the state after prev, an earlier check of the
-- same Take on the same key, as if prev had been admitted (pending.go's
-- follow); op.ahead is the cost of the earlier checks on the key.
local function follow(op, prev)
  local P = op.P
  local kind = P.kind
  op.ahead = (prev.ahead or 0) + prev.n
  if kind == LOG then
    local M = logKind()
    op.S = M.clone(prev.S)
    M.commit(op.S, prev.off, prev.n)
    op.off = M.latestOff(op.S)
    M.prune(P, op.S, op.off)
  elseif kind == BUCKETS then
    local M = bucketsKind()
    op.S = M.clone(prev.S)
    M.commit(op.S, prev.n)
    op.off = M.off(P, op.S)
    M.roll(P, op.S, op.off)
  elseif kind == FIXED or kind == SLIDING then
    op.c = prev.nc
    if not prev.d.a then op.c = windowKinds().charge(P, prev.c, prev.off, prev.n) end
    op.off = windowKinds().late(P, op.c)
  else
    op.c = prev.nc
    if not prev.d.a then op.c = bucketKinds().charge(P, prev.c, prev.n) end
    op.off = 0
  end
end
