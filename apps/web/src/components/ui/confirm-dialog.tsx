import { AlertDialog } from "radix-ui";
import { useId, useState } from "react";
import { Button } from "./button.tsx";
import type { ConfirmOptions } from "./confirm.tsx";
import { overlay, panel } from "./dialog.tsx";
import { Input } from "./input.tsx";

/** The confirmation dialog `useConfirm` opens; focus starts on Cancel, the safe choice. */
export default function ConfirmDialog({
  options,
  onSettle,
}: {
  options: ConfirmOptions;
  onSettle: (confirmed: boolean) => void;
}) {
  const [typed, setTyped] = useState("");
  const inputId = useId();
  const blocked = options.typeToConfirm !== undefined && typed.trim() !== options.typeToConfirm;
  return (
    <AlertDialog.Root open onOpenChange={(open) => !open && onSettle(false)}>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className={overlay} />
        <AlertDialog.Content className={panel}>
          <div className="grid gap-1.5">
            <AlertDialog.Title className="font-semibold text-lg">{options.title}</AlertDialog.Title>
            <AlertDialog.Description className="text-muted-foreground text-sm">
              {options.description}
            </AlertDialog.Description>
          </div>
          {options.typeToConfirm !== undefined ? (
            <div className="grid gap-1.5 text-sm">
              <label htmlFor={inputId}>
                Type <strong className="break-all">{options.typeToConfirm}</strong> to confirm
              </label>
              <Input
                id={inputId}
                value={typed}
                onChange={(event) => setTyped(event.target.value)}
                autoComplete="off"
              />
            </div>
          ) : null}
          <div className="flex flex-wrap justify-end gap-2">
            <AlertDialog.Cancel asChild>
              <Button>Cancel</Button>
            </AlertDialog.Cancel>
            <AlertDialog.Action asChild>
              <Button
                variant={options.destructive ? "destructive" : "primary"}
                disabled={blocked}
                onClick={(event) => {
                  event.preventDefault();
                  if (!blocked) onSettle(true);
                }}
              >
                {options.confirmLabel}
              </Button>
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
