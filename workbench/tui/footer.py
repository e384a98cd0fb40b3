"""The key footer, cut with an ellipsis: keys that do not fit before the palette key are hidden
and a `…` says so (Textual's Footer cut the last key mid-word under the palette key: `y co▏^p`).
F1 lists every key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer, Label
from textual.widgets._footer import FooterKey

MORE = "…"


class KeysFooter(Footer):
    DEFAULT_CSS = """
    KeysFooter > .more { width: auto; padding: 0 1 0 0; color: $footer-description-foreground; }
    """

    def compose(self) -> ComposeResult:
        yield from super().compose()
        more = Label(MORE, classes="more")
        more.display = False
        yield more

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        for key in self._keys():  # all back, measured at the next refresh
            key.display = True
        for more in self.query(".more"):
            more.display = False
        self.call_after_refresh(self._fit)

    def _keys(self) -> list[FooterKey]:
        return [key for key in self.query(FooterKey) if not key.has_class("-command-palette")]

    def _fit(self) -> None:
        """Hide the keys from the first that does not end before the palette key (room kept for `…`)."""
        palettes = [key for key in self.query(FooterKey) if key.has_class("-command-palette")]
        end = palettes[0].region.x if palettes else self.region.right
        keys = [key for key in self._keys() if key.display]
        if not keys or keys[-1].region.right <= end:
            return
        cut = False
        for key in keys:
            cut = cut or key.region.right > end - len(MORE) - 1
            key.display = not cut
        for more in self.query(".more"):
            more.display = True
