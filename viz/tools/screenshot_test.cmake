# One headless screenshot test (viz/CMakeLists.txt): renders every panel of KERNEL with tl-viz
# under xvfb-run into OUT, then checks the PNGs with tl-png-check.
#   cmake -DVIZ=tl-viz -DCHECK=tl-png-check -DXVFB_RUN=/usr/bin/xvfb-run -DKERNEL=kernels/x.tl
#         -DSETS="N=128|M=64" -DOUT=dir -P screenshot_test.cmake
# Prints "SKIP: ..." (CTest: skipped, SKIP_REGULAR_EXPRESSION) when xvfb-run is not installed.
if(NOT XVFB_RUN OR NOT EXISTS "${XVFB_RUN}")
  message("SKIP: xvfb-run not found (apt install xvfb): the headless screenshot test needs it")
  return()
endif()
set(width 1280)
set(height 800)
set(args ${KERNEL} --screenshot ${OUT} --panel all --width ${width} --height ${height} --no-timings
         --sample-blocks 32 --timeout 100)
if(SETS)
  string(REPLACE "|" ";" sets "${SETS}")
  foreach(s ${sets})
    list(APPEND args --set ${s})
  endforeach()
endif()
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${XVFB_RUN} -a -s "-screen 0 1600x1000x24" ${VIZ} ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tl-viz ${args} failed (exit ${rc})")
endif()
set(pngs)
foreach(key stages threads memory occupancy latency fusion timings app)
  list(APPEND pngs ${OUT}/${key}.png)
endforeach()
execute_process(COMMAND ${CHECK} ${width} ${height} ${pngs} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tl-png-check failed (exit ${rc})")
endif()
