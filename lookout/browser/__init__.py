"""Browser pages through Playwright: budgeted accessibility snapshots with refs, actions and their effects."""
