"""What the server's periodic store calls leave behind: no cyclic garbage.

The server runs with the automatic collector off (``arena.runtime.HeapKeeper``
collects only when the heap has doubled), so garbage in reference cycles made
every few seconds grows the process for hours and then costs one long pause.
"""

from __future__ import annotations

import gc
from pathlib import Path

from arena.store import Store


async def test_the_login_recheck_leaves_no_cyclic_garbage(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")
    try:
        names = [f"bot{i}" for i in range(20)]
        for name in names:
            await store.add_bot(name)
        logins = dict.fromkeys(names, "not-the-hash")
        assert await store.revoked_logins(logins) == set(names)  # warm: compiled, cached
        gc.collect()
        gc.disable()
        try:
            for _ in range(50):
                await store.revoked_logins(logins)
            garbage = gc.collect()
        finally:
            gc.enable()
        # A statement built per call left 10 objects in cycles each time: 500 here.
        assert garbage < 50, garbage
    finally:
        await store.close()
