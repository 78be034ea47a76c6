-- wrk script (bench/run-nginx): cycle through the static files of different sizes that
-- bench/run-nginx puts in the served directory, one path per request, in a fixed order.
local paths = { "/index.html", "/1k.bin", "/4k.bin", "/16k.bin", "/64k.bin" }
local i = 0
request = function()
	i = i % #paths + 1
	return wrk.format("GET", paths[i])
end
