import { useCallback, useEffect, useRef, useState } from "react";

export type AsyncState<T> =
  | { status: "loading" }
  | { status: "error"; error: unknown }
  | { status: "ready"; data: T };

/** Loads data for a screen; `reload` runs the loader again (after a write). */
export function useAsync<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
): [AsyncState<T>, () => void, (data: T) => void] {
  const [state, setState] = useState<AsyncState<T>>({ status: "loading" });
  const [version, setVersion] = useState(0);
  // A reload keeps the current data on screen; new inputs (another project) clear it.
  const reloading = useRef(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller lists the loader's inputs.
  useEffect(() => {
    let live = true;
    if (!reloading.current) setState({ status: "loading" });
    reloading.current = false;
    load().then(
      (data) => live && setState({ status: "ready", data }),
      (error: unknown) => live && setState({ status: "error", error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, version]);
  const reload = useCallback(() => {
    reloading.current = true;
    setVersion((v) => v + 1);
  }, []);
  const set = useCallback((data: T) => setState({ status: "ready", data }), []);
  return [state, reload, set];
}
