import { describeBugSchedules } from './_helpers/bug-schedules.js';

// Each bug switch's scripted schedule with the switch off: the campaign finds nothing. The same
// schedules with the switches on are campaign.test.ts.
describeBugSchedules('clean');
