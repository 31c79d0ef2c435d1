-- notes.lua: a bucket key's note of its latest give-back (or undo), as
-- algorithms/bucket_note.go, at the key plus ":g": "gs gns hs hns hx gq
-- gr", G, H (+ hx/L) and Gamma = gq*L + gr (at most C*W). Live while t
-- is before G or less than ceil(C*W/L) after it.
local notes_
local function notes()
  if notes_ then return notes_ end
  local function refill(P) return bdivceil(bmul(P.C, P.W), P.L) end

  -- load: the note live at t + at, or nil; g, h: G, H less t + at.
  local function load(P, key, at)
    local v = call('GET', key)
    if not v then return nil end
    local gs, gns, hs, hns, hx, gq, gr = match(v, '^(%-?%d+) (%d+) (%-?%d+) (%d+) (%d+) (%d+) (%d+)$')
    if not gs then foreign(key) end
    gs, gns, hs, hns, hx, gq, gr = tonumber(gs), tonumber(gns), tonumber(hs), tonumber(hns), tonumber(hx), tonumber(gq), tonumber(gr)
    if gns >= G or hns >= G or hx >= P.L or gr >= P.L then foreign(key) end
    local nt = {gs = gs, gns = gns, hx = hx, gam = badd(bmul(gq, P.L), gr)}
    if far(gs) then
      if gs < TS then return nil end
      nt.ahead, nt.g = true, 2 ^ 52
    else
      nt.g = rel(gs, gns) - at
      nt.ahead = nt.g > 0
      if not nt.ahead and -nt.g >= refill(P) then return nil end
    end
    nt.h = far(hs) and (hs > TS and 2 ^ 52 or -(2 ^ 52)) or rel(hs, hns) - at
    return nt
  end

  -- lower: bucketLowerDeficit.
  local function lower(P, nt, tau, n, w)
    if not nt then return tau end
    local nw = bmul(n, P.W)
    local low = tau
    if bcmp(nw, tau) < 0 then low = nw end
    if nt.ahead or w > -nt.g then return low end
    if w < -nt.g then return tau end
    local hd = nw
    if nt.h < 2 ^ 52 then hd = nt.h > -(2 ^ 52) and deficitOf(nt.h - nt.g, nt.hx, P.L) or 0 end
    if bcmp(hd, nw) < 0 then return tau end
    if bcmp(nt.gam, tau) < 0 then
      local x = bsub(tau, nt.gam)
      if bcmp(low, x) < 0 then return x end
    end
    return low
  end

  -- given: noteGiven, for a give-back at t + at of g (D*L) that left F
  -- at t + ft + fx/L; the key outlives G + ceil(C*W/L) as a state would.
  local function given(P, key, nt, g, ft, fx, minTTL, at)
    local gs, gns = absol(at)
    local gam, grel = g, 0
    if nt and (nt.ahead or nt.g >= 0) then
      gs, gns, gam, grel = nt.gs, nt.gns, badd(nt.gam, g), nt.g
    end
    local cw = bmul(P.C, P.W)
    if bcmp(cw, gam) < 0 then gam = cw end
    local gq, gr = bdivmod(gam, P.L)
    local hs, hns = absol(ft)
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
