// Lifecycle events from WS /v1/events, handed to whichever views listen.
const listeners = new Set();

/** Call `listener(event)` for every event until the returned function is called. */
export function onEvent(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function dispatch(event) {
  for (const listener of listeners) listener(event);
}
