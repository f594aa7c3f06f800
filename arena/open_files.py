"""The process's open-files limit: raised to the most allowed when a server starts.

Every connection is an open file. Many systems start processes with a soft
limit of 1024 while allowing far more (the hard limit); a server left at
1024 stops accepting anyone once about a thousand connections are open.
``raise_limit`` lifts the soft limit to the hard one (an unprivileged
process may) and logs both, once.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

try:
    import resource
except ImportError:  # not on this platform (Windows): nothing to raise
    resource = None  # type: ignore[assignment]


def raise_limit() -> tuple[int, int] | None:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit; the ``(soft, hard)`` now in effect
    (None where the platform has no such limit)."""
    if resource is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as exc:
            log.warning("open files: cannot raise the limit %d to %d: %s", soft, wanted, exc)
            return soft, hard
        log.info(
            "open files: limit raised from %d to %d (hard limit %s)",
            soft,
            wanted,
            "unlimited" if hard == resource.RLIM_INFINITY else hard,
        )
        return wanted, hard
    log.info("open files: limit %d (hard limit %s)", soft, hard)
    return soft, hard
