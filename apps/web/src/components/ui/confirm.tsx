import {
  createContext,
  lazy,
  type ReactNode,
  Suspense,
  useCallback,
  useContext,
  useRef,
  useState,
} from "react";

export interface ConfirmOptions {
  title: string;
  description: ReactNode;
  confirmLabel: string;
  /** Red confirm button: the action cannot be undone. */
  destructive?: boolean;
  /** The person must type this (a name, an email) before the confirm button works. */
  typeToConfirm?: string;
}

type Confirm = (options: ConfirmOptions) => Promise<boolean>;
const ConfirmContext = createContext<Confirm | null>(null);

// The dialog itself (Radix's alert dialog) loads the first time something asks.
const ConfirmDialog = lazy(() => import("./confirm-dialog.tsx"));

/**
 * Hosts the app's one confirmation dialog. `useConfirm()(options)` resolves true when the person
 * confirms, false when they cancel (Esc, Cancel): every destructive action asks first.
 */
export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [options, setOptions] = useState<ConfirmOptions | null>(null);
  const resolver = useRef<((value: boolean) => void) | null>(null);

  const confirm = useCallback<Confirm>((next) => {
    resolver.current?.(false);
    setOptions(next);
    return new Promise<boolean>((resolve) => {
      resolver.current = resolve;
    });
  }, []);

  const settle = useCallback((value: boolean) => {
    resolver.current?.(value);
    resolver.current = null;
    setOptions(null);
  }, []);

  return (
    <ConfirmContext value={confirm}>
      {children}
      {options ? (
        <Suspense fallback={null}>
          <ConfirmDialog options={options} onSettle={settle} />
        </Suspense>
      ) : null}
    </ConfirmContext>
  );
}

export function useConfirm(): Confirm {
  const confirm = useContext(ConfirmContext);
  if (!confirm) throw new Error("useConfirm outside ConfirmProvider");
  return confirm;
}
