"""The terminal subsystem: one private tmux server per session started inside the bubblewrap
sandbox (policy, seccomp filter), its control-mode client, bash runs step by step, shell state
and environment, processes, capped outputs, and the leftovers a killed session leaves.
"""
