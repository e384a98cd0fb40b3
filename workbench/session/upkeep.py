"""Keeping the checkpoint stores in bounds: `workbench sessions --prune` drops the checkpoints of
the sessions it deleted (and of any session no longer in the event log), then packs each store;
`workbench doctor` reports their size."""

from __future__ import annotations

from workbench.config.settings import Settings
from workbench.session.catalog import list_sessions


def prune_checkpoints(settings: Settings) -> str:
    """One line saying what was freed."""
    from workbench.checkpoints.repo import prune

    keep = {info.id for info in list_sessions(settings)}
    dropped, before, after = prune(settings.data_dir, keep)
    return (
        f"checkpoints: dropped those of {dropped} session(s); the stores hold {after / 1e6:.1f} MB "
        f"(were {before / 1e6:.1f} MB)"
    )


def checkpoint_store_line(settings: Settings) -> str:
    from workbench.checkpoints.repo import total_size

    count, size = total_size(settings.data_dir)
    cap = settings.checkpoint_store_cap
    limit = f", cap {cap / 1e9:.1f} GB per workspace" if cap else ""
    state = "on" if settings.checkpoints else "off (setting checkpoints)"
    return f"{count} workspace store(s), {size / 1e6:.1f} MB in {settings.data_dir / 'checkpoints'}{limit}; {state}"
