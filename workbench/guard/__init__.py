"""The guardrail: each tool call judged record / review / block by built-in and the person's rules,
a shell command line read the way bash splits it, an optional model judge, and a call as the
person reviews it.
"""
