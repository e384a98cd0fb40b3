"""The TUI's two themes (Textual's theme system), dark and light; `theme` in the settings picks one.

Every selection and focus style keeps text at 4.5:1 contrast or more on these colours
(tests/tui/test_theme.py measures the rendered rows). NO_COLOR is Textual's: no colour at all.
"""

from __future__ import annotations

from typing import Any

from rich.terminal_theme import TerminalTheme
from rich.theme import Theme as RichTheme
from textual.app import App
from textual.theme import Theme

DARK = Theme(
    name="workbench-dark",
    dark=True,
    background="#101318",
    surface="#171b22",
    panel="#1e242d",
    foreground="#d9dee7",
    primary="#5b9bd5",
    secondary="#a78bfa",
    accent="#f0b35a",
    success="#7cc47f",
    warning="#e5c07b",
    error="#ef6b73",
    variables={
        "block-cursor-background": "#244a70",
        "block-cursor-foreground": "#ffffff",
        "block-cursor-blurred-background": "#2a313c",
        "block-cursor-blurred-foreground": "#ffffff",
        "footer-key-foreground": "#f0b35a",
    },
)
LIGHT = Theme(
    name="workbench-light",
    dark=False,
    background="#fbfaf7",
    surface="#f3f1eb",
    panel="#e7e4db",
    foreground="#1f2328",
    primary="#0b62a4",
    secondary="#6f42c1",
    accent="#a34f00",
    success="#146e2d",
    warning="#8a5a00",
    error="#c2272d",
    variables={
        "block-cursor-background": "#c9def3",
        "block-cursor-foreground": "#0d1117",
        "block-cursor-blurred-background": "#e0dccf",
        "block-cursor-blurred-foreground": "#0d1117",
        "footer-key-foreground": "#8a3f00",
    },
)
THEMES = {"dark": DARK, "light": LIGHT}

# The colours rich's names (green, red, yellow …) take in each theme: readable on its background
# (Textual's default ANSI colours put dark red on dark grey, 2.4:1).
ANSI_DARK = TerminalTheme(
    (16, 19, 24),
    (217, 222, 231),
    [(16, 19, 24), (239, 107, 115), (124, 196, 127), (229, 192, 123),
     (110, 168, 224), (199, 146, 234), (86, 194, 214), (217, 222, 231)],
    [(142, 150, 161), (255, 138, 145), (152, 224, 155), (240, 211, 150),
     (140, 190, 240), (215, 170, 245), (120, 215, 230), (255, 255, 255)],
)  # fmt: skip
ANSI_LIGHT = TerminalTheme(
    (251, 250, 247),
    (31, 35, 40),
    [(31, 35, 40), (179, 38, 30), (20, 110, 45), (122, 82, 0),
     (11, 98, 164), (138, 63, 176), (10, 100, 125), (58, 63, 69)],
    [(87, 96, 106), (160, 30, 25), (15, 95, 38), (105, 70, 0),
     (8, 80, 140), (120, 50, 160), (8, 88, 110), (31, 35, 40)],
)  # fmt: skip

# rich's Markdown draws inline code "on black": dark text boxes in the light theme (cyan on near-black,
# 2.9:1); without the background it is the theme's cyan on the page's colour.
MARKDOWN = RichTheme({"markdown.code": "bold cyan", "markdown.code_block": "cyan"})


def set_theme_before_parse(app: App[Any], theme: Theme) -> None:
    """The theme and its ANSI colours before the stylesheet is first parsed. Set as reactives,
    each would queue a parse of the whole CSS again (twice before the first frame: docs/DECISIONS.md);
    this does what their watchers do, but once and before that parse."""
    for registered in THEMES.values():
        app.register_theme(registered)
    app.set_reactive(App.ansi_theme_dark, ANSI_DARK)
    app.set_reactive(App.ansi_theme_light, ANSI_LIGHT)
    app.set_reactive(App.theme, theme.name)
    app.set_class(theme.dark, "-dark-mode", update=False)
    app.set_class(not theme.dark, "-light-mode", update=False)
    app.set_class(True, f"-theme-{theme.name}", update=False)
    app._refresh_truecolor_filter(app.ansi_theme)
    app.stylesheet.set_variables(app.get_css_variables())
