"""The engine service: sessions hosted by a long-lived process that clients attach to (issue 32)."""
