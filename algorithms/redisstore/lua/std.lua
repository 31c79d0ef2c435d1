-- std.lua: the standard functions the scripts call most, as locals. A
-- global is a table look-up at every use, and in a function library (FCALL)
-- one through the protected globals' metatable; an upvalue is an index. The
-- libraries are not reachable while a library loads, so a library binds
-- them on its first call (bindStd). A script binds the same names at once
-- instead (script.go, luaPrelude).

local function std() return tonumber, math, string, redis, unpack end
local tonumber, floor, max, format, match, sub, call, unpack
local function bindStd()
  local tn, m, s, r, up = std()
  tonumber, floor, max, format, match, sub, call, unpack = tn, m.floor, m.max, s.format, s.match, s.sub, r.call, up
end
