import {
  AppWindow,
  BarChart3,
  BookOpen,
  Bot,
  Brain,
  Briefcase,
  Bug,
  Code2,
  Database,
  Files,
  Folder,
  FolderKanban,
  GitBranch,
  Globe,
  Layers,
  Library,
  Lightbulb,
  Package,
  Paintbrush,
  Palette,
  PenTool,
  Rocket,
  Settings,
  Sparkles,
  Terminal,
  type LucideIcon,
} from 'lucide-react';
import { PROJECT_COLORS, type ProjectIcon as IconName } from '../../../src/domain/project';

/*
 * Project icons, drawn: the API's icon names are Lucide's, so each is drawn by that Lucide icon as
 * inline SVG (bundled, nothing loaded; only the 25 used are in the build). People see the drawing,
 * and the icon's name in words where one must be chosen, never the internal name ("BarChart3").
 */

const ICONS: Record<IconName, [LucideIcon, string]> = {
  Code2: [Code2, 'Code'],
  Terminal: [Terminal, 'Terminal'],
  Bot: [Bot, 'Robot'],
  Brain: [Brain, 'Brain'],
  Sparkles: [Sparkles, 'Sparkles'],
  Database: [Database, 'Database'],
  GitBranch: [GitBranch, 'Git branch'],
  Bug: [Bug, 'Bug'],
  FolderKanban: [FolderKanban, 'Kanban folder'],
  Folder: [Folder, 'Folder'],
  Files: [Files, 'Files'],
  Library: [Library, 'Library'],
  BookOpen: [BookOpen, 'Open book'],
  Briefcase: [Briefcase, 'Briefcase'],
  Package: [Package, 'Package'],
  Layers: [Layers, 'Layers'],
  AppWindow: [AppWindow, 'App window'],
  Rocket: [Rocket, 'Rocket'],
  Palette: [Palette, 'Palette'],
  Paintbrush: [Paintbrush, 'Paintbrush'],
  PenTool: [PenTool, 'Pen'],
  Lightbulb: [Lightbulb, 'Light bulb'],
  BarChart3: [BarChart3, 'Bar chart'],
  Settings: [Settings, 'Gear'],
  Globe: [Globe, 'Globe'],
};

const entry = (icon: string) => ICONS[icon as IconName] ?? ICONS.Code2;

/** The icon's name in words ("Bar chart" for BarChart3). */
export const iconLabel = (icon: string): string => entry(icon)[1];

/** A project's icon on its colour (decorative: the project's name says which it is). */
export function ProjectIcon({ icon, color }: { icon: string; color: string }) {
  // The class names come from fixed lists; an unknown value (never from this service) falls back.
  const c = (PROJECT_COLORS as readonly string[]).includes(color) ? color : 'blue';
  const Icon = entry(icon)[0];
  return (
    <span className={`project-icon color-${c}`} aria-hidden="true">
      <Icon size={24} strokeWidth={2} focusable="false" />
    </span>
  );
}
