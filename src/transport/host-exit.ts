/**
 * Ends our CLI children when the host ends, without changing how the host handles signals.
 *
 * Why not execa's `cleanup` (signal-exit): on a signal, signal-exit re-raises it when it believes it
 * is the only listener, and it counts listeners when its own turn comes. An app's `process.once`
 * handler registered earlier has removed itself by then, so signal-exit saw itself alone, re-raised,
 * and the app died with exit 130 in the middle of its own graceful shutdown.
 *
 * Here the signal listener is prepended, so it counts before any app handler runs: if the app
 * listens, the app decides (and the `exit` hook still ends the children when it exits); if not, the
 * children are ended and the signal is re-raised, so the host ends exactly as it would without us.
 */
interface Killable {
  kill(signal?: NodeJS.Signals): boolean;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const children = new Set<Killable>();
let installed = false;

function endChildren(): void {
  for (const child of children) {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already gone.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  endChildren();
  uninstall();
  process.kill(process.pid, signal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", endChildren);
  for (const signal of SIGNALS) process.prependListener(signal, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off("exit", endChildren);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

/** Ends `child` with the host (exit, or a signal nobody else handles) until `released`. */
export function endWithHost(child: Killable): () => void {
  children.add(child);
  install();
  return () => {
    children.delete(child);
    // With no child left, the host's signal handling is exactly what it was before us.
    if (children.size === 0) uninstall();
  };
}
