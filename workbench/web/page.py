"""The page a browser tab loads: textual-serve's terminal (xterm.js in its `textual.js`) and nothing
fetched from elsewhere (its own template asks a font host for Roboto Mono; the font is in its static
folder). The websocket's address is made from the page's own (`location`), so the page works
through SSH port forwarding or a reverse proxy at another host or port."""

from __future__ import annotations

import html

# What the page may load and reach: only this server; no framing by another site.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'"
)

_PAGE = """<!DOCTYPE html>
<html>
  <head>
    <meta charset="utf-8">
    <meta name="referrer" content="no-referrer">
    <title>{title}</title>
    <link rel="stylesheet" href="/static/css/xterm.css">
    <style>
      @font-face {{
        font-family: "Roboto Mono";
        src: url("/static/fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
        font-style: normal;
      }}
      @font-face {{
        font-family: "Roboto Mono";
        src: url("/static/fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
        font-style: italic;
      }}
      html, body {{ margin: 0; height: 100%; background: #0c181f; }}
      .textual-terminal {{ width: 100vw; height: 100vh; opacity: 0; }}
      body.-first-byte .textual-terminal {{ opacity: 1; }}
      .note {{
        position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
        font-family: "Roboto Mono", monospace; color: rgba(255, 255, 255, 0.9); font-size: 16px;
      }}
      body.-first-byte .starting {{ display: none; }}
      .ended {{ display: none; }}
      body.-closed .ended {{ display: flex; flex-direction: column; background: #0c181f; }}
      button {{ margin: 16px; padding: 12px 28px; border: none; background: #5e0ba7; color: white;
        font-family: inherit; cursor: pointer; }}
    </style>
    <script src="/static/js/textual.js"></script>
  </head>
  <body>
    <div class="note starting">{title}: starting</div>
    <div class="note ended"><div>The app in this tab has ended, or the server did not start one
      (too many tabs: the terminal of `workbench web` says why).</div>
      <button type="button" id="again">Open a new one</button></div>
    <div id="terminal" class="textual-terminal" data-font-size="{font_size}"></div>
    <script>
      document.getElementById("terminal").dataset.sessionWebsocketUrl =
        (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
      document.getElementById("again").onclick = () => location.reload();
    </script>
  </body>
</html>
"""


def page(title: str, font_size: int) -> str:
    """The tab's HTML (textual.js reads the websocket's address and the font size from #terminal)."""
    return _PAGE.format(title=html.escape(title), font_size=font_size)
