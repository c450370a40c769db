"""The operator's view: the health and metrics endpoint, the Web API's measured client, and the
``flower-bot usage`` / ``audit`` reports read from the store."""
