"""One arena served by several nodes that share a PostgreSQL database and an MQTT broker.

``ClusterNode`` (``node``) is what a server adds as one node of several: the
shared seek queue (``seek_queue``), redirects to the node hosting a match
(``placement``, ``channel``), and the sweep that ends the matches of nodes
that are gone. ``BrokerFeed`` (``broker_feed``) lets spectators of any node
watch the matches of the others through the broker. ``docs/scaling.md``
describes the design.
"""

from arena.cluster.node import ClusterNode
from arena.cluster.placement import default_public_url

__all__ = ["ClusterNode", "default_public_url"]
