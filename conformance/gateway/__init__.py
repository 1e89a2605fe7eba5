"""Gateway mode: the fake provider as a gateway's upstream, the gateway's answers judged."""
