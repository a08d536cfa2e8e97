"""The timeline: every action and observation as a frame, rendered into an agent's history within a budget."""
