import { describeBugSchedules } from './_helpers/bug-schedules.js';

// Each bug switch's scripted schedule with the switch on: the campaign's checks catch the bug.
// The same schedules with the switches off are campaign-clean.test.ts.
describeBugSchedules('exposed');
