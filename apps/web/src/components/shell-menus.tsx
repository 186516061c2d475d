/** The shell's menus (org switcher, account, phone menu): a chunk of their own, loaded when idle. */
import { useNavigate } from "@tanstack/react-router";
import {
  Building2,
  Check,
  ChevronsUpDown,
  Menu as MenuIcon,
  Monitor,
  Moon,
  Plus,
  Sun,
} from "lucide-react";
import { type ReactNode, useState } from "react";
import { cn } from "../lib/cn.ts";
import { useSession } from "../lib/session.tsx";
import { type ThemeChoice, useTheme } from "../lib/theme.ts";
import { NavLinks } from "./shell.tsx";
import { Button } from "./ui/button.tsx";
import { Dialog, DialogTrigger, SheetContent } from "./ui/dialog.tsx";
import {
  Menu,
  MenuContent,
  MenuItem,
  MenuLabel,
  MenuRadioGroup,
  MenuRadioItem,
  MenuSeparator,
  MenuTrigger,
} from "./ui/menu.tsx";

/** The org switcher: the orgs the person belongs to, with their role, and a new one. */
export function OrgSwitcher({ className }: { className?: string }) {
  const { me, org, selectOrg } = useSession();
  const navigate = useNavigate();
  if (!me) return null;
  return (
    <Menu>
      <MenuTrigger asChild>
        <Button variant="ghost" size="sm" className={cn("min-w-0 justify-between", className)}>
          <Building2 aria-hidden="true" />
          <span className="sr-only">Organization: </span>
          <span className="min-w-0 truncate">{org?.name ?? "No organization"}</span>
          <ChevronsUpDown aria-hidden="true" className="text-muted-foreground" />
        </Button>
      </MenuTrigger>
      <MenuContent align="start" className="w-72">
        <MenuLabel>Organizations</MenuLabel>
        {me.orgs.map((candidate) => (
          <MenuItem
            key={candidate.id}
            onSelect={() => {
              selectOrg(candidate.id);
              void navigate({ to: "/projects" });
            }}
          >
            <Check aria-hidden="true" className={candidate.id === org?.id ? "" : "invisible"} />
            <span className="min-w-0 flex-1 truncate">{candidate.name}</span>
            <span className="text-muted-foreground text-xs capitalize">{candidate.role}</span>
          </MenuItem>
        ))}
        <MenuSeparator />
        <MenuItem onSelect={() => void navigate({ to: "/orgs/new" })}>
          <Plus aria-hidden="true" />
          New organization
        </MenuItem>
      </MenuContent>
    </Menu>
  );
}

const THEMES: { value: ThemeChoice; label: string; icon: ReactNode }[] = [
  { value: "light", label: "Light", icon: <Sun aria-hidden="true" /> },
  { value: "dark", label: "Dark", icon: <Moon aria-hidden="true" /> },
  { value: "system", label: "System", icon: <Monitor aria-hidden="true" /> },
];

/** The account menu: who is signed in, the theme, the account page and sign-out. */
export function UserMenu() {
  const { me, signOut } = useSession();
  const [theme, setTheme] = useTheme();
  const navigate = useNavigate();
  if (!me) return null;
  const initial = (me.name || me.email).trim().charAt(0).toUpperCase() || "?";
  return (
    <Menu>
      <MenuTrigger asChild>
        <Button variant="ghost" size="icon" aria-label="Account menu">
          <span
            aria-hidden="true"
            className="grid size-8 place-items-center rounded-full bg-primary font-semibold text-primary-foreground text-sm"
          >
            {initial}
          </span>
        </Button>
      </MenuTrigger>
      <MenuContent className="w-64">
        <MenuLabel className="grid">
          <span className="truncate font-medium text-foreground text-sm">
            {me.name || me.email}
          </span>
          <span className="truncate">{me.email}</span>
        </MenuLabel>
        <MenuSeparator />
        <MenuItem onSelect={() => void navigate({ to: "/account" })}>Account</MenuItem>
        <MenuSeparator />
        <MenuLabel>Theme</MenuLabel>
        <MenuRadioGroup value={theme} onValueChange={(value) => setTheme(value as ThemeChoice)}>
          {THEMES.map((option) => (
            <MenuRadioItem key={option.value} value={option.value}>
              {option.icon}
              {option.label}
            </MenuRadioItem>
          ))}
        </MenuRadioGroup>
        <MenuSeparator />
        <MenuItem
          onSelect={() => {
            void signOut().then(() => navigate({ to: "/signin" }));
          }}
        >
          Sign out
        </MenuItem>
      </MenuContent>
    </Menu>
  );
}

/** The phone's menu: navigation and the org switcher in a sheet behind one button. */
export function MobileMenu() {
  const [open, setOpen] = useState(false);
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogTrigger asChild>
        <Button variant="ghost" size="icon" className="md:hidden" aria-label="Open menu">
          <MenuIcon aria-hidden="true" />
        </Button>
      </DialogTrigger>
      <SheetContent title="Menu">
        <span className="flex h-8 items-center font-semibold">Parley</span>
        <OrgSwitcher className="w-full" />
        <NavLinks vertical onNavigate={() => setOpen(false)} />
      </SheetContent>
    </Dialog>
  );
}
