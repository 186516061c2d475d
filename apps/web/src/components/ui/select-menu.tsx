import { Check, ChevronDown } from "lucide-react";
import { Select as SelectPrimitive } from "radix-ui";
import type { ComponentProps, ReactNode } from "react";
import { cn } from "../../lib/cn.ts";

/**
 * A select whose options carry more than a word (a model with its prices): Radix's listbox, so
 * the keyboard (arrows, typeahead, Enter, Esc), focus and ARIA are the platform's. For a plain
 * list of words, the native `Select` of input.tsx is lighter and is the phone's own picker.
 * Not for the shell: only screens in their own chunk import it.
 */
export const SelectMenu = SelectPrimitive.Root;

const triggerBase =
  "inline-flex min-w-0 items-center justify-between gap-2 rounded-md text-left text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring disabled:cursor-not-allowed disabled:opacity-50 data-[placeholder]:text-muted-foreground [&>span]:min-w-0 [&>span]:truncate";

/** `field`: bordered like the form's other fields; `ghost`: a quiet button in a toolbar. */
export function SelectMenuTrigger({
  className,
  children,
  variant = "field",
  ...props
}: ComponentProps<typeof SelectPrimitive.Trigger> & { variant?: "field" | "ghost" }) {
  return (
    <SelectPrimitive.Trigger
      className={cn(
        triggerBase,
        variant === "field" &&
          "h-9 w-full border border-input bg-background px-3 shadow-xs aria-invalid:border-destructive",
        variant === "ghost" && "h-8 px-2 font-medium hover:bg-accent",
        className,
      )}
      {...props}
    >
      {children}
      <SelectPrimitive.Icon asChild>
        <ChevronDown aria-hidden="true" className="size-4 shrink-0 opacity-60" />
      </SelectPrimitive.Icon>
    </SelectPrimitive.Trigger>
  );
}

export const SelectMenuValue = SelectPrimitive.Value;

/** The list, under its trigger, at least as wide as it and never wider than the screen. */
export function SelectMenuContent({
  className,
  children,
  ...props
}: ComponentProps<typeof SelectPrimitive.Content>) {
  return (
    <SelectPrimitive.Portal>
      <SelectPrimitive.Content
        position="popper"
        sideOffset={4}
        collisionPadding={8}
        className={cn(
          "z-50 max-h-[min(24rem,var(--radix-select-content-available-height))] min-w-[var(--radix-select-trigger-width)] max-w-[calc(100vw-1rem)] overflow-hidden rounded-lg border border-border bg-popover text-popover-foreground shadow-lg",
          className,
        )}
        {...props}
      >
        <SelectPrimitive.Viewport className="p-1">{children}</SelectPrimitive.Viewport>
      </SelectPrimitive.Content>
    </SelectPrimitive.Portal>
  );
}

/**
 * One option: `children` is its name (what the trigger shows once chosen), `detail` the line
 * under it in the list only (prices, context). Both are read out with the option.
 */
export function SelectMenuItem({
  className,
  children,
  detail,
  ...props
}: ComponentProps<typeof SelectPrimitive.Item> & { detail?: ReactNode }) {
  return (
    <SelectPrimitive.Item
      className={cn(
        "relative grid cursor-default select-none gap-0.5 rounded-md py-2 pr-3 pl-8 text-sm outline-none data-[disabled]:pointer-events-none data-[highlighted]:bg-accent data-[highlighted]:text-accent-foreground data-[disabled]:opacity-50",
        className,
      )}
      {...props}
    >
      <span className="absolute top-2.5 left-2 flex size-4 items-center justify-center">
        <SelectPrimitive.ItemIndicator>
          <Check aria-hidden="true" className="size-4" />
        </SelectPrimitive.ItemIndicator>
      </span>
      <SelectPrimitive.ItemText>{children}</SelectPrimitive.ItemText>
      {detail ? <span className="text-muted-foreground text-xs">{detail}</span> : null}
    </SelectPrimitive.Item>
  );
}

export function SelectMenuLabel({
  className,
  ...props
}: ComponentProps<typeof SelectPrimitive.Label>) {
  return (
    <SelectPrimitive.Label
      className={cn("px-2 pt-2 pb-1 font-medium text-muted-foreground text-xs", className)}
      {...props}
    />
  );
}

export const SelectMenuGroup = SelectPrimitive.Group;

export function SelectMenuSeparator({ className }: { className?: string }) {
  return <SelectPrimitive.Separator className={cn("my-1 h-px bg-border", className)} />;
}
