-- spec.lua: the checks of a compact call (see fast.lua), parsed once. Each
-- check is one argument, "kind L W C Buckets MaxDelay cost" (L the limit
-- the check is judged at, C its Spec's capacity: main.lua); SPECS maps it
-- to its numbers, so a Spec judged at two limits has two entries. Run as
-- a function (FCALL) the table lives as long as the library, so a
-- configured policy is parsed once per server, not once per call; run as
-- a script (EVALSHA) it lives for one call.

local SPECS, nspecs = {}, 0

-- spec returns the numbers of check argument s (an array: kind, L, W, C,
-- Buckets, MaxDelay, cost), or nil when s is malformed.
local function spec(s)
  local p = SPECS[s]
  if p then return p end
  local k, L, W, C, B, md, n = match(s, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
  if not k then return nil end
  p = {tonumber(k), tonumber(L), tonumber(W), tonumber(C), tonumber(B), tonumber(md), tonumber(n)}
  if nspecs >= 1024 then -- bounded: start again
    SPECS, nspecs = {}, 0
  end
  SPECS[s] = p
  nspecs = nspecs + 1
  return p
end
