import { Setting, SettingsTable } from '../../src/config/settings';
import { Fact, Facts } from './fragments';
import { count, duration } from './readable';

/** A setting whose values are durations: in milliseconds by its name, or written with a unit. */
export function isDurationSetting(name: string, setting: Setting<unknown>): boolean {
  return /_MS$/.test(name) || /^\d+(ms|s|m|h|d)$/.test(setting.default ?? '');
}

/**
 * The values a setting declares that prose may state, each as a number: its default (when it is
 * one value), its least and its most (an integer's or a duration's; a duration in milliseconds).
 */
export function declaredValues(setting: Setting<unknown>): { default?: number; min?: number; max?: number } {
  const value =
    typeof setting.defaultValue === 'number' && setting.default !== undefined ? setting.defaultValue : undefined;
  return { default: value, min: setting.min, max: setting.max };
}

/**
 * `default:NAME`, `min:NAME` and `max:NAME` for each setting that declares them: what the docs mean
 * by "(5 seconds by default)" or "(up to 1,000)". A duration in words; a default otherwise as it is
 * written (a port is no count), a bound as a count.
 */
export function settingFacts(settings: SettingsTable): Facts {
  return Object.fromEntries(
    Object.entries(settings).flatMap(([name, setting]) => {
      const inWords = isDurationSetting(name, setting) ? duration : count;
      const { default: value, min, max } = declaredValues(setting);
      const defaultText = value !== undefined && isDurationSetting(name, setting) ? duration(value) : setting.default;
      // A sentence names a setting by its name, in code or in a URL, an assignment, a table.
      const about = new RegExp(`\\b${name}\\b`);
      const facts: [string, Fact][] = [];
      if (defaultText !== undefined) facts.push([`default:${name}`, { text: defaultText, about }]);
      if (min !== undefined) facts.push([`min:${name}`, { text: inWords(min), about }]);
      if (max !== undefined) facts.push([`max:${name}`, { text: inWords(max), about }]);
      return facts;
    }),
  );
}
