"""A run: its job (what the thin client read), and in the process a host started, a supervisor
that always answers by the deadline and the work it watches (read config, run the hooks,
merge, reply, audit) in a child process. The resident process's run calls the work itself.

Whatever happens to the work (an exception, a hang, a hook that kills or stops it), the
supervisor answers: the work's reply if it came in time, otherwise a block when a managed or
fail-closed hook could apply to the event, otherwise one line and a non-blocking exit code.
"""
