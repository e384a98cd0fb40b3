"""Web tools: web_search on real backends and web_fetch behind a network guard that admits public
addresses only.
"""
