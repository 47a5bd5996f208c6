# Runs NVIDIA's rdma_topo (the oracle file named in argv[1], read at run time, never copied) once per request, in one
# Python process: Python's start costs ~0.8 s on a loaded 2-core machine, which a fuzzer of thousands of trees cannot
# pay per tree. Request: one JSON line {"devdir": ...}; answer: one JSON line {"stdout", "status", "stderr"}, as
# `RDMA_TOPO_DEVDIR=devdir python3 rdma_topo check` would give (exit status, last line of a traceback).
import contextlib, io, json, os, sys, traceback, types

code = compile(open(sys.argv[1]).read(), sys.argv[1], "exec")
for line in sys.stdin:
    req = json.loads(line)
    os.environ["RDMA_TOPO_DEVDIR"] = req["devdir"]
    sys.argv = ["rdma_topo", "check"]
    out, status, err = io.StringIO(), 0, ""
    with contextlib.redirect_stdout(out):
        try:
            # A fresh module each time (its command table is found by importing its own name).
            mod = types.ModuleType("rdma_topo_oracle")
            sys.modules["rdma_topo_oracle"] = mod
            exec(code, mod.__dict__)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            status, err = 1, traceback.format_exc()
    sys.stdout.write(json.dumps({"stdout": out.getvalue(), "status": status, "stderr": err}) + "\n")
    sys.stdout.flush()
