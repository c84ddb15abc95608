/** What a project is, without I/O. */

export const PROJECT_ICONS = [
  'Code2',
  'Terminal',
  'Bot',
  'Brain',
  'Sparkles',
  'Database',
  'GitBranch',
  'Bug',
  'FolderKanban',
  'Folder',
  'Files',
  'Library',
  'BookOpen',
  'Briefcase',
  'Package',
  'Layers',
  'AppWindow',
  'Rocket',
  'Palette',
  'Paintbrush',
  'PenTool',
  'Lightbulb',
  'BarChart3',
  'Settings',
  'Globe',
] as const;
export const PROJECT_COLORS = ['rose', 'pink', 'orange', 'amber', 'emerald', 'cyan', 'blue', 'purple', 'slate', 'gray'] as const;
export type ProjectIcon = (typeof PROJECT_ICONS)[number];
type ProjectColor = (typeof PROJECT_COLORS)[number];
export const DEFAULT_ICON: ProjectIcon = 'Code2';
export const DEFAULT_COLOR: ProjectColor = 'blue';

/** A project id: chosen by the client (the upload CLI derives it), or a generated UUID. */
export const PROJECT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
export const PROJECT_ID_RE = new RegExp(PROJECT_ID_PATTERN);
