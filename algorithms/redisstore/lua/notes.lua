-- notes.lua: a token_bucket or leaky_bucket key's note of its latest
-- give-back that gave units back (or undo of a cross-slot reservation),
-- mirroring algorithms/bucket_note.go. It lives in the key plus ":g" as
-- "gs gns hs hns hx gq gr": the instant G of that give-back (a give-back
-- at an earlier instant, the clock behind, adds to it), the instant H the
-- bucket was full right after it (hs*10^9 + hns plus hx/L ns), and
-- Gamma = gq*L + gr, the units (D*L) the give-backs at G gave back
-- together, at most C*W (a larger Gamma changes no outcome: a Take's
-- deficit tau is at most C*W). It counts while t is before G or less than
-- ceil(C*W/L) ns after it, and its key lives at least that long.
local notes_
local function notes()
  if notes_ then return notes_ end

  local function refill(P) return bdivceil(bmul(P.C, P.W), P.L) end

  -- load returns the note of key live at the give-back's instant t + at
  -- (at = 0 but for an undo, cluster.lua), or nil. g is G less that
  -- instant (ns), ahead whether it is before G; h, hx are H less it (ns)
  -- and its remainder.
  local function load(P, key, at)
    local v = call('GET', key)
    if not v then return nil end
    local gs, gns, hs, hns, hx, gq, gr = match(v, '^(%-?%d+) (%d+) (%-?%d+) (%d+) (%d+) (%d+) (%d+)$')
    if not gs then foreign(key) end
    gs, gns, hs, hns, hx, gq, gr = tonumber(gs), tonumber(gns), tonumber(hs), tonumber(hns), tonumber(hx), tonumber(gq), tonumber(gr)
    if gns >= G or hns >= G or hx >= P.L or gr >= P.L then foreign(key) end
    local nt = {gs = gs, gns = gns, hx = hx, gam = badd(bmul(gq, P.L), gr)}
    if far(gs) then
      if gs < TS then return nil end -- more than 23 days before t: dead
      nt.ahead, nt.g = true, 2 ^ 52
    else
      nt.g = rel(gs, gns) - at
      nt.ahead = nt.g > 0
      if not nt.ahead and -nt.g >= refill(P) then return nil end
    end
    if far(hs) then
      nt.h = hs > TS and 2 ^ 52 or -(2 ^ 52)
    else
      nt.h = rel(hs, hns) - at
    end
    return nt
  end

  -- lower returns the deficit (D*L) the give-back of a Take of n units
  -- reckoned at t - w takes the Take to have left at its instant, tau
  -- being its decision's and nt the key's live note (algorithms'
  -- bucketLowerDeficit).
  local function lower(P, nt, tau, n, w)
    if not nt then return tau end
    local nw = bmul(n, P.W)
    local function least(a, b)
      if bcmp(b, a) < 0 then return b end
      return a
    end
    if nt.ahead then return least(tau, nw) end -- a clock behind: before G
    local d = -nt.g -- t - G
    if w < d then return tau end
    if w > d then return least(tau, nw) end
    -- At G: after the give-backs there when the bucket held less than
    -- the Take's own n units right after them.
    local hd = 0
    if nt.h >= 2 ^ 52 then
      hd = nw
    elseif nt.h > -(2 ^ 52) then
      hd = deficitOf(nt.h - nt.g, nt.hx, P.L)
    end
    if bcmp(hd, nw) < 0 then return tau end
    local lb = nw
    if bcmp(nt.gam, tau) < 0 then
      local x = bsub(tau, nt.gam)
      if bcmp(nw, x) < 0 then lb = x end
    end
    return least(tau, lb)
  end

  -- given writes key's note after a give-back at t + at that gave back
  -- g (D*L) and left F at t + ft + fx/L, nt being the note load found
  -- (nil for none).
  local function given(P, key, nt, g, ft, fx, minTTL, at)
    local gs, gns = absol(at)
    local gam, grel = g, 0
    if nt and not (not nt.ahead and nt.g < 0) then -- t at or before G
      gs, gns, gam, grel = nt.gs, nt.gns, badd(nt.gam, g), nt.g
    end
    local cw = bmul(P.C, P.W)
    if bcmp(cw, gam) < 0 then gam = cw end
    local gq, gr = bdivmod(gam, P.L)
    local hs, hns = absol(ft)
    -- The key outlives G + ceil(C*W/L): ceil(rs/10^6) + 1 ms, at least
    -- minTTL, as a state's (fastlib.lua's write).
    local rs = grel + refill(P)
    local sub = rs % 1000000
    local ms = (rs - sub) / 1000000 + 1
    if sub > 0 then ms = ms + 1 end
    if ms < minTTL then ms = minTTL end
    call('SET', key, format('%d %d %d %d %d %d %d', gs, gns, hs, hns, fx, gq, gr), 'PX', ttlArg(ms))
  end

  notes_ = {load = load, lower = lower, given = given}
  return notes_
end
