"""The generator's phrase tables: slot fillers, request templates per team and sub-intent, and the hard cases' frames."""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------------
# Slot fillers. Templates name them as {slot}; [square brackets] mark the evidence span of a request.
# ---------------------------------------------------------------------------------------------------

POWERED = (
    "ProCut 450 mower", "ProCut 520 petrol mower", "cordless lawn mower", "RoboMow S2 robot mower", "lawn mower",
    "leaf blower", "AirGust 300 leaf blower", "hedge trimmer", "TrimMaster 52 hedge trimmer", "chainsaw",
    "TimberKing 40 chainsaw", "strimmer", "EdgePro 25 strimmer", "pressure washer", "AquaBlast 1800 pressure washer",
    "rotavator", "garden vacuum", "log splitter", "lawn scarifier", "cordless pruning saw", "electric tiller",
    "garden shredder", "wood chipper", "cylinder mower", "ride-on mower", "pole saw", "lawn edger", "brush cutter",
    "cultivator", "Verdant V8 robot mower", "GreenEdge 36V strimmer", "snow blower", "cordless hedge cutter",
)
KITS = (
    "greenhouse kit", "GrowHouse 6x4 greenhouse", "garden bench", "rattan garden set", "patio table",
    "wooden shed", "EcoBin 330 compost bin", "compost bin", "raised bed kit", "potting bench", "garden arch",
    "pergola kit", "bistro set", "log store", "cold frame", "garden set", "gazebo", "playhouse", "summerhouse",
    "corner sofa set", "metal shed", "firewood rack", "fence panels", "trellis", "decking kit", "garden gate",
    "log cabin", "polytunnel", "bike store", "swing set", "arbour seat", "obelisk",
)
OTHER_GOODS = (
    "garden hose", "FlexiHose 30m hose", "hose reel", "sprinkler", "parasol", "wheelbarrow", "water butt",
    "bird feeder", "pair of secateurs", "set of solar lights", "fire pit", "hammock", "watering can",
    "wildflower seed mix", "pack of tomato seeds", "lawn feed", "sun lounger", "gas barbecue", "trampoline",
    "garden kneeler", "leaf rake", "planter", "fountain pump", "storage box", "pond pump", "pond filter",
    "patio heater", "greenhouse heater", "rotary washing line", "soil tester", "weed burner", "bird bath",
    "compost tumbler", "rain gauge", "pressure sprayer", "hose timer", "lawn aerator", "garden trug",
)
SEEDS = ("tomato seeds", "wildflower seeds", "lawn seed", "sweet pea seeds", "carrot seeds", "sunflower seeds",
         "runner bean seeds")
WEARABLES = ("gardening gloves", "wellies", "garden boots", "work trousers", "gardening jacket", "knee pads",
             "walking boots", "waterproof trousers")
SIZES = ("8", "9", "10", "M", "L", "XL", "small", "large")
PARTS = ("blade", "spark plug", "air filter", "battery", "charger", "starter cord", "spool", "chain", "nozzle",
         "hose connector", "grass box", "wheel", "drive belt", "safety key")
MODELS = ("the ProCut 520", "the petrol version", "the cordless model", "the 40V version", "the bigger model",
          "the AirGust 500", "the 8x6 size", "the next size up")
COLOURS = ("green", "grey", "black", "red", "blue", "anthracite", "sage", "natural wood")
CARDS = ("card", "Visa", "debit card", "Mastercard", "credit card", "Amex", "bank card")
PAY_METHODS = ("PayPal", "Apple Pay", "Klarna", "Google Pay", "my gift card", "my Visa", "my Mastercard")
COURIERS = ("DPD", "the courier", "Evri", "Royal Mail", "the driver", "Parcelforce", "the delivery driver", "Yodel")
CODES = ("SPRING20", "GARDEN10", "WELCOME15", "LARK5", "BBQ25", "GROW10", "SUMMER30")
FIRST_NAMES = ("Maria", "John", "Priya", "Tom", "Aisha", "Gareth", "Sue", "Dave", "Helen", "Mohammed", "Olga",
               "Ben", "Fiona", "Raj", "Karen", "Liam", "Joan", "Pete", "Chloe", "Wojciech", "Sian", "Ade")
SURNAMES = ("Smith", "Patel", "Jones", "Williams", "Brown", "Khan", "Evans", "Taylor", "Nowak", "Murphy",
            "O'Neill", "Hughes")
TOWNS = ("Leeds", "Bristol", "Norwich", "Cardiff", "York", "Exeter", "Derby", "Bath", "Harrogate", "Stroud")
STREETS = ("Elm Road", "Mill Lane", "Church Street", "Orchard Close", "Station Road", "Meadow Way",
           "Park Avenue", "The Green")
MAIL_DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.uk", "btinternet.com", "hotmail.co.uk")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SPANS = ("three days", "a week", "10 days", "two weeks", "over a week", "5 days", "nearly a month", "four days")

# ---------------------------------------------------------------------------------------------------
# Requests: (team, intent, templates). Each template has at least one [evidence] span.
# ---------------------------------------------------------------------------------------------------

INTENTS = (
    ("payments", "double_charge", (
        "[My card was charged twice for one order]. Can you [remove the duplicate charge]?",
        "I've been [charged twice] for {order}. Please [refund the second payment].",
        "There are [two identical payments of {amount}] on my statement for the same order.",
        "[You took the money twice] for my {product}. I only ordered one!",
        "[Double charge] on my {card} for {order}, {amount} each time. [Please reverse one of them].",
        "Why have I [paid twice]? My bank shows [{amount} taken two times] {date}.",
        "[The payment went out twice] for the same {product}, [I need the duplicate refunded].",
        "[My {card} was charged twice] for {order}. Can you [cancel the duplicate charge]?",
    )),
    ("payments", "unknown_charge", (
        "There is a [charge from Larkfield I don't recognise] on my {card}: {amount} {date}.",
        "[I was charged {amount}] but [I haven't placed any order].",
        "Can you explain [this {amount} payment to Larkfield]? [I didn't buy anything].",
        "[Unknown transaction of {amount}] from you on my statement. [What is it for]?",
        "My bank shows [a payment to Larkfield I never made].",
        "Please tell me [why you took {amount} from my account] {date}.",
    )),
    ("payments", "wrong_amount", (
        "[I was charged {amount} instead of {amount2}] for {order}.",
        "The [price at checkout was {amount2} but you took {amount}].",
        "[Wrong amount charged] for my {product}, the site said {amount2}.",
        "[You charged me more than the listed price] for the {product}. [Please refund the difference].",
        "My receipt says {amount2} but [my card was debited {amount}].",
        "[The total taken doesn't match my order confirmation] ({amount} instead of {amount2}).",
    )),
    ("payments", "declined", (
        "[My {card} keeps getting declined] at checkout.",
        "[Payment failed] three times when I tried to buy the {product}.",
        "I can't [pay with {paymethod}], it just says [payment error].",
        "[The checkout won't accept my card] even though there's money on it.",
        "Why is [my payment being declined]? My bank says everything is fine on their side.",
        "[Paying with {paymethod} isn't working] for {order}, it [keeps failing at the last step].",
    )),
    ("payments", "invoice", (
        "Could you [send me a VAT invoice] for {order}?",
        "[I need a receipt] for the {product} for my business expenses.",
        "[The invoice is missing my company name], can you [reissue the invoice]?",
        "[Where can I download the invoice] for the order I placed {date}?",
        "Please [email me a copy of the receipt] for {amount}.",
        "[The invoice shows the wrong VAT amount]. [Please correct the invoice].",
    )),
    ("payments", "promo_code", (
        "[The promo code {code} didn't work] at checkout.",
        "[I forgot to apply my discount code] {code}, can you [apply it now and refund the difference]?",
        "[Your code {code} says invalid] but the email says it's valid until Sunday.",
        "[The {code} discount wasn't taken off] the total.",
        "[My voucher wasn't applied] to {order}, I paid full price.",
        "Can I still [use code {code}] on an order I placed {date}?",
    )),
    ("payments", "price_adjustment", (
        "[The {product} dropped to {amount2} the day after I paid {amount}]. [Can you refund the price difference]?",
        "[Do you offer price matching]? I saw the {product} cheaper elsewhere.",
        "I bought the {product} {date} and [now it's on sale]. [Can I get the difference back]?",
        "[Please adjust the price] on {order}, it went down by {amount} a day later.",
        "[The sale price wasn't applied] to my {product} even though it showed in the basket.",
        "[Can you honour the sale price] for {order}?",
    )),
    ("payments", "charging_mistake", (
        "[You took payment for an order that was cancelled]. [When will I get the money back]?",
        "[I was charged for {order} even though the payment failed] and I had to order again.",
        "[The refund for the overcharge still hasn't reached my {card}].",
        "[My order was cancelled but the {amount} is still pending] on my card.",
        "[You charged a delivery fee on a free delivery order]. [Please refund the {amount}].",
        "[I was charged for an item that was out of stock]. [Please refund the charge].",
    )),
    ("payments", "payment_options", (
        "[Can I pay in instalments] for the {product}?",
        "[Klarna isn't showing as a payment option] at checkout.",
        "[How do I pay with a gift card] and a card together?",
        "[My gift card balance wasn't used] on {order}.",
        "[Can I change the payment method] on {order}?",
        "[Do you take {paymethod}] as payment?",
    )),
    ("delivery", "where_is_order", (
        "[Where is my order]? I ordered the {product} {date}.",
        "[My {product} still hasn't arrived] and it's been {days}.",
        "[Any update on {order}]? Still nothing here.",
        "[When will my {product} be delivered]?",
        "I'm still [waiting for {order}] which was due {date}.",
        "[It's been {days} and no sign of my parcel].",
        "[Has my order been dispatched yet]? It's {order}.",
    )),
    ("delivery", "tracking", (
        "[The tracking link doesn't work] for {order}.",
        "[Tracking hasn't updated] in {days}, [it just says in transit].",
        "[I haven't received a tracking number] for my {product}.",
        "[The tracking says delivered but nothing came].",
        "Could you [send me the tracking details] for {order}?",
        "[The tracking shows my parcel in the wrong city].",
    )),
    ("delivery", "late_or_stuck", (
        "[My parcel is stuck at the depot] for {days} now.",
        "[The delivery is late], it was promised {date}.",
        "[Still out for delivery] since {date}, [what's going on]?",
        "[The {product} missed the delivery date] you gave me.",
        "[{courier} keeps postponing the delivery].",
        "[My parcel hasn't moved since it left the warehouse] {date}.",
    )),
    ("delivery", "lost_parcel", (
        "[{courier} says my parcel was delivered but I never got it].",
        "[My parcel has been lost] by {courier}.",
        "[I think the parcel is lost], nothing for {days}.",
        "[The delivery photo shows someone else's door].",
        "[The box was left outside and has gone missing].",
        "[Please send a replacement for the lost parcel] with the {product}.",
    )),
    ("delivery", "wrong_address", (
        "[I entered the wrong delivery address] for {order}, [can you redirect the parcel]?",
        "[The parcel went to my old address] on {street}.",
        "[Please change the delivery address] on {order} to {house} {street}, {town}.",
        "[{courier} delivered my parcel to the wrong house].",
        "[The delivery address on the label is wrong].",
        "[Can the courier deliver to my work address instead]?",
    )),
    ("delivery", "delivery_slot", (
        "[Can I change my delivery slot] to Saturday?",
        "[I need to rebook the delivery] for the {product}, I won't be in {date}.",
        "[The driver came outside my delivery slot].",
        "[I missed the delivery] and the card says to rebook.",
        "[Can you deliver the {product} on a weekday afternoon] instead?",
        "[Nobody called before the two-man delivery] like you promised.",
    )),
    ("delivery", "partial_shipment", (
        "[Only part of my order arrived]. The {product} is missing.",
        "[I received one box out of two] for {order}.",
        "[The {product} wasn't in the parcel], only the {product2}.",
        "[Half of {order} is missing].",
        "[Where is the rest of my order]? Only the {product} came.",
        "[I got the {product} but not the {product2}] from the same order.",
    )),
    ("delivery", "damaged_in_transit", (
        "[The {product} arrived damaged], the box was crushed.",
        "[The parcel was damaged in transit] and the {product} is dented.",
        "[The courier dropped the box] and [it arrived broken].",
        "[The box was soaking wet and torn] when it arrived.",
        "[The {product} arrived with a cracked casing] straight out of the delivery box.",
        "[The packaging was smashed on arrival] and [the {product} is scratched].",
    )),
    ("delivery", "courier_conduct", (
        "[The delivery driver was rude] to my mum.",
        "[The courier threw my parcel over the fence].",
        "[The driver left the {product} in the rain] by the gate.",
        "[The courier didn't even knock], just left a card.",
        "[Can you tell the courier to leave parcels in the shed]?",
        "[Which courier is delivering] {order}?",
    )),
    ("returns", "start_return", (
        "[I'd like to return the {product}].",
        "[How do I send back] the {product}?",
        "[I want to return] {order}, [how does it work]?",
        "[Can I return the {product}] if I've opened the box?",
        "[Please arrange a return] for the {product}.",
        "[I need to send the {product} back].",
    )),
    ("returns", "return_label", (
        "[I need a return label] for {order}.",
        "[The return label link doesn't work].",
        "[Can you email me a returns label]? There wasn't one in the box.",
        "[The returns label won't print].",
        "[Can you arrange a collection for my return]? The {product} is too heavy for the post office.",
        "[Is the return label free] or do I pay postage?",
    )),
    ("returns", "exchange", (
        "[Can I exchange the {product} for the {colour} one]?",
        "[I'd like to swap the {wearable} for a size {size}].",
        "[I want to exchange the {product} for {model}].",
        "[Can I swap it for a different colour]? The {colour} doesn't go with our patio.",
        "[I ordered the wrong size] of {wearable}, [can I exchange them]?",
        "[Exchange please], wrong model, [I need {model}].",
    )),
    ("returns", "return_refund_status", (
        "[I sent the {product} back {date} and haven't had my refund yet].",
        "[Where is my refund for the returned {product}]?",
        "[You received my return] {days} ago but [still no refund].",
        "[When will I be refunded for my return]?",
        "[My return shows as received but the refund is still pending].",
        "[The refund for my return was less than I paid] for the {product}.",
    )),
    ("returns", "change_of_mind", (
        "[I changed my mind about the {product}], [can I send it back]?",
        "[I don't need the {product} anymore], [can I return it unused]?",
        "[It's too big for our garden], [I'd like to return it].",
        "[My husband already bought one], [so I want to return mine].",
        "[The {product} isn't what I expected], [I'd like to send it back for my money].",
        "[Ordered two by mistake], [want to return one].",
    )),
    ("returns", "return_window", (
        "[Is it too late to return the {product}]? I bought it {date}.",
        "[How long do I have to return] the {product}?",
        "[Can I still return something I bought {days} ago]?",
        "[Does the return window start from delivery] or from the order date?",
        "[I missed the 30 day return window by {days}], [can you make an exception]?",
        "[Can I return a sale item]?",
    )),
    ("returns", "return_in_transit", (
        "[I dropped my return at the post office] {date}, [did you get it]?",
        "[Has my return arrived at your warehouse] yet?",
        "[The courier never collected my return].",
        "[I've lost the receipt for my return drop-off].",
        "[My return has been on its way back to you] for {days}.",
        "[Can I return it in a store] instead of posting it?",
    )),
    ("returns", "partial_return", (
        "[I'd like to return one item from {order}] and keep the rest.",
        "[Can I return a gift] without the receipt?",
        "[I got the {product} as a gift] and [want to exchange it].",
        "[Return just the {product}] please, the other items are fine.",
        "[Can I return the {product} for store credit] instead?",
        "[I want to return the {product2} from the bundle] on its own.",
    )),
    ("product", "wont_start", (
        "[My {tool} won't start].",
        "[The {tool} cuts out after a few seconds].",
        "[The engine on my {tool} won't turn over].",
        "[I pull the starter cord and nothing happens].",
        "[The {tool} stopped working] halfway through the job.",
        "[The {tool} starts then dies] every time.",
    )),
    ("product", "assembly", (
        "[How do I assemble the {kit}]? The instructions make no sense.",
        "[The assembly instructions for the {kit} skip] step 7.",
        "[I can't fit the panels on the {kit}], [the holes don't line up].",
        "[Which screws go where] on the {kit}?",
        "[Is there a video showing how to put the {kit} together]?",
        "[Stuck assembling the {kit}], [the roof panel won't clip in].",
    )),
    ("product", "how_to_use", (
        "[How do I adjust the cutting height] on the {tool}?",
        "[What oil should I use] in the {tool}?",
        "[How do I change the {part}] on my {tool}?",
        "[How often should I sharpen the blade] on the {tool}?",
        "[What is the right setting for wet grass] on the {tool}?",
        "[How do I wind the line on the spool] of the strimmer?",
    )),
    ("product", "defect_in_use", (
        "[The handle snapped] after two weeks of normal use.",
        "[The {tool} is leaking oil].",
        "[The {tool} started making a grinding noise] when I use it.",
        "[The {gear} splits] every time I turn the tap on fully.",
        "[The blade came loose] while I was using the {tool}.",
        "[The {tool} gets very hot and smells of burning].",
        "[The {kit} got damaged after a month] of light use.",
    )),
    ("product", "warranty", (
        "[Is my {tool} still under warranty]? I bought it {date}.",
        "[I'd like a warranty repair] for the {tool}.",
        "[How do I make a warranty claim] for the {product}?",
        "[Does the warranty cover the motor] on the {tool}?",
        "[Can you repair the {tool} under guarantee]?",
        "[Where do I send the {tool} for repair]?",
    )),
    ("product", "spare_parts", (
        "[Do you sell a replacement {part}] for the {tool}?",
        "[I need a new {part}] for my {tool}.",
        "[Where can I buy spare parts] for the {product}?",
        "[Can I order a spare {part}]?",
        "[What's the part number for the {part}] on the {tool}?",
        "[The {part} wore out], [where do I get another one]?",
    )),
    ("product", "compatibility", (
        "[Will the {part} fit my {tool}]?",
        "[Does the hose connector fit a standard outdoor tap]?",
        "[Is this battery compatible with my other 18V tools]?",
        "[Will the {gear} work with my existing hose reel]?",
        "[Can I use the {tool} with an extension lead]?",
        "[Are the {kit} panels compatible with the older model]?",
    )),
    ("product", "battery", (
        "[The battery on my {tool} won't charge].",
        "[The charger light keeps flashing red].",
        "[The battery only lasts ten minutes] now.",
        "[How long should the battery take to charge]?",
        "[The battery gets hot while charging].",
        "[My {tool} battery drains] even when it's not in use.",
    )),
    ("product", "seeds_and_plants", (
        "[None of the {seeds} came up] after {days}.",
        "[How deep should I sow the {seeds}]?",
        "[When is the best time to plant the {seeds}]?",
        "[The {seeds} sprouted but then died].",
        "[Do the {seeds} need a greenhouse]?",
        "[Are the {seeds} safe for pets]?",
    )),
    ("account", "password", (
        "[I forgot my password] and [the reset email never arrives].",
        "[Can you reset my password]?",
        "[The password reset link has expired].",
        "[I can't log in], [it says my password is wrong].",
        "[The reset password link doesn't work].",
        "[How do I change my password]?",
    )),
    ("account", "login", (
        "[I can't log into my account].",
        "[The login page keeps loading forever].",
        "[I keep getting logged out of the app].",
        "[My login code never arrives] by text.",
        "[Sign in fails with an error message].",
        "[Two-factor authentication isn't working] for my account.",
    )),
    ("account", "locked_or_hacked", (
        "[My account is locked] after too many attempts.",
        "[I think my account has been hacked].",
        "[Someone changed my account password] without me knowing.",
        "[I got an email about a login to my account from another country].",
        "[Please unlock my account].",
        "[Someone else is using my account].",
    )),
    ("account", "profile", (
        "[How do I update my phone number] on my account?",
        "[My name is spelled wrong on my profile].",
        "[I can't save changes to my profile].",
        "[Please update my surname on the account], I got married.",
        "[The profile page won't let me edit my details].",
        "[Can I add a second phone number to my profile]?",
    )),
    ("account", "email_or_address_change", (
        "[I need to change the email address on my account] to {email}.",
        "[Please update my account email] to {email}.",
        "[How do I change my saved address] in my profile?",
        "I moved house, [please update the address on my account] to {house} {street}, {town}.",
        "[My saved address on my profile is still the old one] and I can't edit it.",
        "[I can't remove an old address from my address book].",
    )),
    ("account", "newsletter", (
        "[Please unsubscribe me from your newsletter].",
        "[Stop sending me marketing emails].",
        "[I keep getting promotional texts] even though I opted out.",
        "[How do I turn off the newsletter]?",
        "[Take me off your mailing list].",
        "[I unsubscribed but still get emails] every day.",
    )),
    ("account", "loyalty_points", (
        "[My loyalty points haven't been added] for {order}.",
        "[How many Green Points do I have]?",
        "[My points balance disappeared] from my account.",
        "[How do I redeem my loyalty points]?",
        "[My loyalty card isn't linked to my account].",
        "[The points from my last order are missing].",
    )),
    ("account", "order_history", (
        "[My order history page is empty].",
        "[I can't see my past orders in my account].",
        "[An old order is missing from my order history].",
        "[The orders page in my account shows an error].",
        "[How do I download my order history]?",
        "[My order history doesn't show] {order}.",
    )),
    ("account", "data_deletion", (
        "[Please delete my account].",
        "[I want all my data deleted] under GDPR.",
        "[How do I close my account]?",
        "[Can you send me a copy of the data you hold about me]?",
        "[Remove my personal details from your systems].",
        "[Delete my account and saved card details] please.",
    )),
)

# One-liners: the whole ticket is (nearly) the request, so the shortest tickets are 3-8 tokens.
SHORT = (
    ("payments", ("[charged twice]!!", "[card declined] again", "[refund the double charge] pls",
                  "[need an invoice] for {order}", "[promo code not working]", "[why was I charged {amount}]?",
                  "[payment keeps failing]")),
    ("delivery", ("[where is my order]??", "[parcel not arrived]", "[tracking not updating]",
                  "[wrong delivery address] on {order}", "[still no delivery]", "[parcel missing]",
                  "[when will {order} arrive]?")),
    ("returns", ("[return label please]", "[want to return] the {product}", "[refund for my return] not received",
                 "[exchange for a bigger size] pls", "[how do I return this]?", "[send back] {order}",
                 "[return collection] please")),
    ("product", ("[{tool} won't start]", "[battery not charging]", "[need a spare {part}]", "[blade broken]",
                 "[how to assemble] the {kit}?", "[warranty repair] please", "[{tool} leaking oil]")),
    ("account", ("[can't log in]", "[reset password] pls", "[account locked]", "[unsubscribe me]",
                 "[delete my account]", "[change my email] to {email}", "[points missing] from my account")),
)
SHORT_TAILS = ("", "", "", " pls", " please", "!", " asap", " help", "??", " thx")

# Non-evidence context that still leans towards the team (what a customer adds after the request).
DETAILS = (
    ("payments", ("I paid by {card}.", "The payment was {amount}.", "My bank has confirmed the transaction.",
                  "I checked my online banking this morning.", "The statement reference says LARKFIELD WEB.",
                  "I paid {date}.", "The money left my account {date}.")),
    ("delivery", ("It was supposed to come {date}.", "I've been in all day waiting.",
                  "The tracking number is {tracking}.", "I paid for next day delivery.",
                  "There's a side gate the driver can use.", "I live at {house} {street}, {town}.",
                  "It's a big box so it can't go through the letterbox.")),
    ("returns", ("It's still in the original box.", "I haven't used it.", "I bought it {date}.",
                 "All the packaging is intact.", "It's unused and boxed.", "I still have the receipt.",
                 "The item is in perfect condition.")),
    ("product", ("I've followed the manual.", "I've used it maybe five times.", "I bought it {date}.",
                 "I've checked the fuel and the oil.", "I bought it last spring.", "The serial number is {serial}.",
                 "It's been stored in the shed over winter.")),
    ("account", ("My username is {email}.", "I've tried on my phone and my laptop.", "I've cleared the cookies.",
                 "I've had the account for years.", "I tried the app and the website.",
                 "The account is under {email}.", "I use the same email as always.")),
)

# ---------------------------------------------------------------------------------------------------
# Hard cases. Negations set another team's topic aside; asides mention it in passing; ambiguous
# requests belong to two teams (the first is the routing convention).
# ---------------------------------------------------------------------------------------------------

# (sentence said before the request, sentence said after it, clause joined with ", but" to the request)
NEGATIONS = (
    ("delivery", (
        "It's not a delivery problem.", "It's not a delivery problem and I keep the {product}.",
        "It's not a delivery problem and I'm keeping the {product}.", "The parcel arrived fine.",
        "The parcel arrived on time, no issues with the delivery.", "Delivery was quick and the courier was great.",
        "This isn't about the delivery.", "The {product} came on time and in one piece.",
        "Nothing wrong with the delivery itself.", "Tracking was fine and it arrived {date}.",
    ), (
        "The delivery itself was fine.", "No problem with the delivery.", "This is not about the delivery.",
        "It's not a delivery issue.", "The parcel arrived on time by the way.",
    ), (
        "The parcel arrived on time", "The delivery was fine", "The courier was fine",
        "It isn't a delivery problem", "The {product} arrived in one piece",
    )),
    ("payments", (
        "The payment went through fine.", "This isn't a billing question.", "I was charged the right amount.",
        "There's no problem with my card.", "Payment was fine, I was charged correctly.",
        "It's not a payment problem.", "My card wasn't charged twice or anything like that.",
        "The invoice and the payment are all correct.",
    ), (
        "The payment itself was fine.", "It's not about the money or the charge.", "My card was charged correctly.",
        "This is not a payment issue.", "Billing is all fine.",
    ), (
        "The payment went through fine", "My card was charged correctly", "The price was right",
        "It's not a payment issue", "I paid without any trouble",
    )),
    ("returns", (
        "I don't want to return it.", "I'm keeping the {product}.", "I'm not sending it back.",
        "This isn't a return.", "I don't want an exchange.", "It's not a returns question.",
        "I'm happy to keep the {product}.", "I don't want to send anything back.",
    ), (
        "I'm not returning it.", "I don't want to send it back.", "This is not about a return.",
        "I'm keeping it, no exchange needed.", "No return needed.",
    ), (
        "I'm keeping the {product}", "I don't want to send anything back", "I'm not returning it",
        "This isn't a return", "I don't want an exchange",
    )),
    ("product", (
        "Nothing wrong with the product itself.", "The {product} works perfectly.", "The {product} itself is great.",
        "It's not a fault with the {product}.", "This is not a technical question.",
        "The {product} is fine, no defects.", "It's not a product problem.",
    ), (
        "The product itself is fine.", "Nothing is wrong with the {product}.", "It's not a product fault.",
        "The {product} works great, that's not the issue.", "No technical problem with it.",
    ), (
        "The {product} works perfectly", "The product itself is fine", "Nothing wrong with the {product}",
        "It's not a fault with the product", "The {product} is great",
    )),
    ("account", (
        "This isn't about my password.", "I can log in fine.", "My account is fine.", "It's not an account issue.",
        "I'm not asking about my login.", "My password works.", "Nothing wrong with my account.",
    ), (
        "My login works fine.", "This is not about my account.", "It's not a password problem.",
        "I can get into my account without problems.", "The account itself is fine.",
    ), (
        "I logged in without problems", "My account is fine", "My password works",
        "It's not an account problem", "I can sign in fine",
    )),
)

# Another team's topic mentioned in passing, usually marked as settled or incidental.
ASIDES = (
    ("delivery", (
        "The delivery was two days late, but that's sorted now.", "My last parcel came late too, never mind that.",
        "The courier left the box with my neighbour, which was fine.", "By the way, the driver was very late again.",
        "The parcel turned up late {date}, whatever.", "Tracking said Monday and it came Wednesday.",
        "The box was a bit battered when it arrived but everything inside was ok.",
        "I waited in all day for the delivery, which was annoying.",
    )),
    ("payments", (
        "I paid {amount} with {paymethod}.", "I used the code {code} at checkout.",
        "I got the refund for the other charge last week, thanks for that.", "I paid by {card} {date}.",
        "The invoice came through fine.", "By the way, your checkout was really slow to accept my card.",
        "I paid the full {amount} up front.", "The discount code worked nicely.",
    )),
    ("returns", (
        "I returned a hose last month and that went smoothly.", "I already sent the {product2} back {date}.",
        "The return for my last order was easy.", "I might return the {product2} later, but that's for another day.",
        "I've still got a return label from last time.", "My exchange last year was painless.",
        "The refund for my last return came quickly.",
    )),
    ("product", (
        "I've been using the {product} every weekend.", "I used the {tool} on the back lawn yesterday.",
        "The {kit} was a bit tricky to assemble but I managed.", "The battery on my old {tool} died last summer.",
        "I love the {product}, it does a great job.", "I had to sharpen the blade on my {tool} last week.",
        "The {tool} started first pull, lovely machine.",
    )),
    ("account", (
        "I had to reset my password to get in, which was annoying.", "I logged in to my account to check the order.",
        "I get your newsletter so I saw the offer there.", "I checked my order history in the app.",
        "I've already updated my email address on my profile.", "I used my loyalty points on this order.",
        "I finally remembered my password.",
    )),
)
ASIDE_LEADS = ("", "", "", "Anyway, ", "Anyway, what I need is this: ", "The reason I'm writing: ",
               "Different thing though: ", "My actual question: ", "Anyway, the actual question: ",
               "That's by the by, but ", "Anyway, the real reason I'm writing: ", "More to the point, ",
               "Which brings me to my question: ", "That's not why I'm writing though – ")

# (convention team, other plausible team, template). The convention is the data card's labelling rule: the team
# that must act on the main request (broken on arrival and sent back: returns; broken and to be fixed: product).
AMBIGUOUS = (
    ("returns", "delivery", "[The {product} arrived damaged] and [I'd like to send it back]."),
    ("returns", "delivery", "[The box was crushed and the {product} is cracked], [can I return it for a new one]?"),
    ("returns", "payments", "[I returned the {product} but you charged me again] for it."),
    ("returns", "payments", "[The refund for my return is {amount} short]."),
    ("returns", "product", "[The {tool} broke after a week], [I want to send it back for my money]."),
    ("returns", "product", "[The {tool} is faulty], [can I swap it for a new one]?"),
    ("product", "returns", "[The {tool} broke after a week], [can you repair it]?"),
    ("payments", "account", "[I can't pay because the checkout keeps logging me out]."),
    ("account", "payments", "[I can't remove my saved card from my account]."),
    ("delivery", "account", "[My parcels keep going to my old address] even though I moved."),
    ("account", "delivery", "[Please change my address for this order and all future orders] to {house} {street}."),
    ("delivery", "product", "[A part is missing from the {kit} box]."),
    ("product", "delivery", "[The {kit} came without the screws], [I can't finish building it]."),
    ("payments", "returns", "[I was charged for the replacement] even though it was an exchange."),
    ("account", "payments", "[My loyalty points weren't taken off the total] at checkout."),
    ("payments", "delivery", "[I paid for next day delivery but it took a week], [I want the delivery fee back]."),
    ("delivery", "payments", "[I was charged {amount} but the order never shipped]."),
    ("returns", "product", "[The {product} doesn't fit our space], [can I swap it for {model}]?"),
    ("product", "delivery", "[The {tool} was dead on arrival], [it won't switch on at all]."),
)

# ---------------------------------------------------------------------------------------------------
# Wrapping: greetings, irrelevant context, closings, sign-offs.
# ---------------------------------------------------------------------------------------------------

GREETINGS = ("Hi,", "Hello,", "Hello team,", "Hi there,", "Dear Larkfield,", "Dear Sir/Madam,", "Good morning,",
             "Hey,", "Hiya,", "Hi Larkfield team,", "To whom it may concern,", "Hello Larkfield,", "Afternoon,")
FILLERS = (
    "We've had so much rain this week that the lawn is basically a pond.",
    "My neighbour has been on at me about the hedge for weeks.",
    "I'm getting the garden ready for my daughter's birthday party.",
    "The roses are finally blooming after a slow spring.",
    "We only moved in {date} and the garden is a jungle.",
    "I've been a customer for years and usually everything is great.",
    "Sorry for the long message, I'm not very good with computers.",
    "The dog keeps digging up the flower beds, which doesn't help.",
    "It's been a stressful week with work and the kids off school.",
    "I'm 78 and my grandson normally helps me with these things.",
    "The forecast says sun all weekend so I was hoping to get going.",
    "We're hosting a barbecue on Saturday for the whole street.",
    "My allotment committee recommended you to me.",
    "I spent the whole morning weeding the vegetable patch.",
    "The tomatoes are doing really well this year.",
    "My wife says I spend far too much time out there.",
    "Our cat has decided the new flower bed is her toilet.",
    "I tried calling but the line was busy for an hour.",
    "I'm writing this from my phone so excuse any typos.",
    "The grass hasn't been cut in three weeks and the neighbours are starting to look.",
    "Last year I bought lots of things from you and was always happy.",
    "It's my first proper garden so I'm still learning.",
    "We've just had the patio redone and it looks lovely.",
    "The hedges are taller than the house at this point.",
    "Honestly the frost killed half my plants last winter.",
    "I have a small garden in the city, nothing fancy.",
    "My husband normally deals with this sort of thing but he's away.",
    "The apple tree dropped about a hundred apples overnight.",
    "Spring is my favourite time of year in the garden.",
    "We've got a wedding in the garden in two weeks, so timing matters.",
    "The kids want to camp in the garden all summer.",
    "I've been trying to sort this for a while now and I'm losing patience.",
)
ORDER_REFS = ("Order number {ref}.", "It's {order}.", "Ref: {ref}.", "The order is {ref}.", "Order: {ref}.",
              "This is about {order}.", "My order number is {ref}.")
CLOSINGS = ("Please help.", "Can you help?", "Thanks for sorting this.", "I'd appreciate a quick reply.",
            "This is really frustrating.", "Please get back to me asap.", "Hope you can sort it.",
            "Look forward to hearing from you.", "What are my options?", "Please advise.")
SIGNOFFS = ("Thanks, {name}", "Thank you.", "Cheers, {name}", "Regards, {name} {surname}", "Kind regards, {name}",
            "Many thanks", "Thanks in advance!", "Best, {name}", "{name}", "Thanks", "Cheers")
FOLLOW_UP_LEADS = ("Also, ", "And ", "On top of that, ", "Another thing: ", "Plus ", "While I'm at it, ")

# ---------------------------------------------------------------------------------------------------
# Sub-intents written as parts that the generator puts into team-neutral frames, so that one request
# reads in many ways (a question, an indirect request, a bare statement of the problem, a polite letter,
# a terse one-liner). Per sub-intent:
#   you:    what the customer wants Larkfield to do, as a verb phrase ("resend the receipt for {order}")
#   me:     what the customer wants to do themselves ("swap my {wearable} for a bigger size")
#   ask:    an embedded question ("when my {kit} will be delivered")
#   state:  the problem stated, without a request ("the door of my {kit} won't stay shut")
#   direct: whole sentences with their own [evidence] marks
# The whole part becomes the evidence span when it is framed.
# ---------------------------------------------------------------------------------------------------

SUBINTENTS = (
    # -- payments ------------------------------------------------------------------------------------
    ("payments", "receipt_invoice", {
        "you": ("resend the receipt for {order}", "send me a copy of my receipt", "email me the invoice for {order}",
                "send over a VAT invoice for the {product}", "put my company name on the invoice",
                "resend my payment confirmation", "issue an invoice with my business address on it",
                "send me a receipt for the {amount} I paid"),
        "me": ("get a receipt for {order}", "download the invoice for my {product}", "get a VAT receipt",
               "find the invoice for the order I placed {date}", "get a proper invoice for my accountant"),
        "ask": ("where I can find the invoice for {order}", "whether the receipt includes VAT",
                "how to get a copy of my receipt", "why the invoice has the wrong name on it"),
        "state": ("I never got a receipt for {order}", "the receipt email never arrived",
                  "my invoice shows the wrong VAT number", "I need the invoice for my expenses claim",
                  "the invoice for the {product} is missing the VAT", "I deleted the receipt email by mistake"),
        "direct": ("[Receipt for {order}] please.", "[Can I have a receipt] for the {product}?",
                   "[Invoice] needed for {order}, [with VAT shown].", "[No receipt came through] for my {product}."),
    }),
    ("payments", "price_adjustment", {
        "you": ("refund the difference now that the {product} is on sale", "match the lower price of the {product}",
                "give me the sale price on {order}", "adjust the price I paid for the {product}",
                "honour the discount that started the day after I ordered"),
        "me": ("get the price difference back on my {product}", "claim the sale price on {order}",
               "get the {amount} difference refunded"),
        "ask": ("whether you do price matching", "if I can get the difference back now the {product} is cheaper",
                "why I paid {amount} when it's now {amount2}"),
        "state": ("the {product} went down to {amount2} right after I paid {amount}",
                  "I paid full price and the next day it was in the sale",
                  "the {product} is {amount} cheaper now than when I bought it"),
        "direct": ("[Price dropped] on the {product} the day after I bought it, [can I get the difference]?",
                   "[Price match please], the {product} is {amount2} elsewhere."),
    }),
    ("payments", "currency_fees", {
        "you": ("explain the foreign transaction fee on my statement", "refund the currency conversion fee",
                "charge me in pounds instead of euros", "remove the card fee you added"),
        "me": ("pay in pounds rather than euros", "avoid the extra card fee", "pay without a surcharge"),
        "ask": ("why I was charged a fee for paying by {card}", "why the amount was in euros",
                "what the extra {amount} fee on my statement is", "if there's a fee for paying with {paymethod}"),
        "state": ("my bank added a currency conversion fee", "I was charged in dollars instead of pounds",
                  "there's an extra surcharge of {amount} for using a credit card",
                  "the checkout added a {amount} card fee"),
        "direct": ("[Why was I charged in euros]?", "[There's a {amount} fee] on my statement [I don't understand]."),
    }),
    ("payments", "pending_charge", {
        "you": ("release the pending payment on my {card}", "cancel the pending authorisation of {amount}",
                "remove the hold on my card", "sort out the pending charge for the cancelled order"),
        "me": ("get the pending {amount} released", "stop the pending payment from going through"),
        "ask": ("why there's a pending charge of {amount} on my card", "how long the pending payment will take to drop off",
                "when the authorisation hold will be released"),
        "state": ("there's a pending payment of {amount} for an order I cancelled",
                  "my bank shows a pending charge from Larkfield", "the money is still on hold on my {card}",
                  "{amount} has been pending on my account for {days}"),
        "direct": ("[Pending charge of {amount}] still on my card, [order was cancelled].",
                   "[The payment is still pending] after {days}."),
    }),
    ("payments", "double_charge", {
        "you": ("refund the second payment", "cancel the duplicate charge on my {card}",
                "take off the extra payment for {order}", "reverse one of the two charges"),
        "me": ("get my money back for the double payment", "get the duplicate charge refunded"),
        "ask": ("why I've been charged twice for {order}", "why my {card} shows two payments of {amount}"),
        "state": ("I've been charged twice for the same {product}", "the money came out twice for {order}",
                  "my statement shows two payments of {amount} for one order", "you took payment two times"),
        "direct": ("[Charged twice] for {order}!", "[Two payments of {amount}] went out for one {product}."),
    }),
    ("payments", "declined", {
        "you": ("check why my payment keeps failing", "take my payment over the phone",
                "let me know why my {card} is declined"),
        "me": ("pay with my {card}", "complete the payment for the {product}", "pay for my basket"),
        "ask": ("why my card keeps getting declined", "why the payment fails at the last step",
                "why {paymethod} gets rejected at checkout"),
        "state": ("my payment keeps getting declined", "the checkout rejects my {card} every time",
                  "payment failed three times", "{paymethod} gives an error when I try to pay",
                  "the card payment won't go through", "the bank page freezes when I pay"),
        "direct": ("[Card declined] again.", "[Payment not going through] for the {product}."),
    }),
    ("payments", "promo_code", {
        "you": ("apply the code {code} to {order}", "refund the discount I missed", "take the {code} discount off",
                "add my voucher to the order"),
        "me": ("use my discount code", "apply {code} after paying", "use two promo codes on one order"),
        "ask": ("why the code {code} isn't working", "if {code} is still valid", "why my discount wasn't applied"),
        "state": ("the promo code {code} says invalid", "my voucher didn't come off the total",
                  "the discount from the email wasn't taken off", "I forgot to put in my code {code}"),
        "direct": ("[Code {code} not working].", "[The 20% discount wasn't applied] to my {product}."),
    }),
    ("payments", "overcharge", {
        "you": ("refund the overcharge on {order}", "give me back the {amount} you overcharged",
                "refund the delivery fee on my free delivery order", "refund the charge for the cancelled order",
                "correct the amount you took"),
        "me": ("get the money back for the out of stock item", "be refunded the difference"),
        "ask": ("why I was charged {amount} instead of {amount2}", "when the refund for the overcharge will arrive",
                "why I paid for an item you never had in stock"),
        "state": ("you charged me {amount} but the price was {amount2}", "I was charged for an item that was cancelled",
                  "the total taken is more than my order confirmation", "I've been overcharged by {amount}",
                  "I was billed for a cancelled order"),
        "direct": ("[Overcharged] by {amount} on {order}.", "[Wrong amount taken] from my {card}."),
    }),
    ("payments", "payment_options", {
        "you": ("change the payment method on {order}", "split the payment between my gift card and my {card}",
                "set me up to pay in instalments"),
        "me": ("pay in instalments for the {product}", "pay with {paymethod}", "use my gift card balance",
               "pay by bank transfer", "split the payment across two cards"),
        "ask": ("whether you accept {paymethod}", "if I can pay monthly for the {product}",
                "why Klarna isn't offered at checkout", "how much is left on my gift card"),
        "state": ("{paymethod} isn't showing as an option", "my gift card balance wasn't used on {order}",
                  "I can't find the option to pay in instalments"),
        "direct": ("[Do you take {paymethod}]?", "[Pay later option] for the {product}?"),
    }),
    ("payments", "unknown_charge", {
        "you": ("explain the {amount} charge on my statement", "tell me what the payment of {amount} was for",
                "refund a payment I don't recognise"),
        "me": ("find out what this charge is", "dispute a charge from Larkfield"),
        "ask": ("what the {amount} payment {date} was for", "why you took money when I haven't ordered anything"),
        "state": ("there's a Larkfield payment on my card I don't recognise", "I was charged {amount} but never ordered",
                  "a payment to Larkfield I never made shows on my statement"),
        "direct": ("[Unknown charge of {amount}] from Larkfield on my {card}.",),
    }),
    # -- delivery ------------------------------------------------------------------------------------
    ("delivery", "delivery_date", {
        "you": ("tell me when my {product} will arrive", "give me a delivery date for {order}",
                "confirm the delivery day for the {kit}", "chase the delivery of {order}",
                "let me know when the {product} is dispatched"),
        "me": ("find out when my {product} will be delivered", "know the delivery date for {order}",
               "get an idea when the {kit} turns up"),
        "ask": ("when my {product} will be delivered", "when {order} will arrive", "when the {kit} is going to come",
                "if my order has been dispatched yet", "how long delivery takes for the {product}",
                "what day the {kit} will be delivered", "when I can expect the {product}"),
        "state": ("my {product} still hasn't arrived", "I'm still waiting for {order}", "the {kit} hasn't turned up yet",
                  "it's been {days} and no sign of the {product}", "the delivery is late",
                  "my order was due {date} and nothing has come"),
        "direct": ("[When will my {product} be delivered]?", "[When does the {kit} arrive]?",
                   "[Where is my {product}]?", "[Has {order} shipped]?", "[Any news on my delivery]?",
                   "[When is the {product} coming]?"),
    }),
    ("delivery", "delivery_slot", {
        "you": ("move my delivery to Saturday", "rebook the delivery for next week", "deliver the {kit} on a weekday morning",
                "change my delivery slot", "book a new delivery date for the {product}"),
        "me": ("change the delivery day", "pick a different delivery slot", "rearrange the delivery of the {kit}",
               "rebook my missed delivery"),
        "ask": ("if the delivery can come in the afternoon", "whether I can choose a delivery time",
                "what time the driver will come {date}"),
        "state": ("I won't be home on the delivery day", "I missed the delivery and got a card through the door",
                  "the driver came outside my delivery slot", "nobody called before the two-man delivery"),
        "direct": ("[Can the delivery be moved] to Friday?", "[Missed the delivery], [need to rebook]."),
    }),
    ("delivery", "redirection", {
        "you": ("redirect my parcel to my work address", "send the {product} to my neighbour instead",
                "deliver {order} to my daughter's house", "hold the parcel at the depot for me to collect",
                "divert the parcel to a pickup point"),
        "me": ("collect the parcel from the depot", "have the {product} delivered somewhere else",
               "pick up my parcel from a locker"),
        "ask": ("if the courier can deliver to a different address", "whether I can collect the {product} from the depot",
                "if my parcel can go to a parcel shop"),
        "state": ("I'm away when the {kit} is due so it needs to go elsewhere", "I'd rather the parcel went to my office"),
        "direct": ("[Please redirect {order}] to {house} {street}, {town}.",),
    }),
    ("delivery", "dropoff_instructions", {
        "you": ("leave the parcel in the shed", "tell the driver to leave it behind the side gate",
                "leave the {product} with a neighbour if I'm out", "add a safe place to {order}",
                "make sure the courier rings the bell"),
        "me": ("add delivery instructions", "choose a safe place for the parcel", "leave a note for the driver"),
        "ask": ("whether the driver can leave it round the back", "if the courier can put the box in the garage"),
        "state": ("the driver never reads my delivery notes", "the parcel was left on the doorstep in the rain",
                  "the courier left the {product} in full view of the street"),
        "direct": ("[Please leave the parcel] in the porch.", "[Safe place]: behind the bins."),
    }),
    ("delivery", "wrong_address", {
        "you": ("change the delivery address on {order}", "update the address for this delivery to {house} {street}",
                "fix the address on the shipping label", "stop the parcel going to my old address"),
        "me": ("correct the delivery address", "change where {order} is going"),
        "ask": ("whether I can still change the delivery address", "why the parcel went to {town}"),
        "state": ("I put the wrong delivery address on {order}", "the parcel went to my old house",
                  "{courier} delivered my parcel to the wrong house", "the label has the wrong postcode",
                  "my parcel was sent to the billing address instead of the delivery address"),
        "direct": ("[Wrong delivery address] on {order}!", "[Parcel delivered to number {house}] instead of my house."),
    }),
    ("delivery", "partial_shipment", {
        "you": ("send the rest of my order", "send the missing box of the {kit}", "tell me when the second parcel is coming"),
        "me": ("get the rest of {order}", "find out where the second box is"),
        "ask": ("where the rest of my order is", "when the other parcel will arrive", "if the {product2} was sent separately"),
        "state": ("only half of my order arrived", "I got one box out of two for the {kit}",
                  "the {product} came but not the {product2}", "the parcel only had part of my order in it"),
        "direct": ("[Only one of the two boxes arrived].", "[Half my order is missing]."),
    }),
    ("delivery", "tracking", {
        "you": ("send me the tracking number for {order}", "check where my parcel is", "fix the tracking link"),
        "me": ("track my parcel", "find the tracking number", "see where the {product} is"),
        "ask": ("where my parcel is right now", "why the tracking hasn't moved", "which courier has my parcel"),
        "state": ("the tracking hasn't updated in {days}", "the tracking link says not found",
                  "tracking shows my parcel in the wrong city", "I never got a tracking email"),
        "direct": ("[Tracking not updating] for {order}.", "[No tracking number] for my {product}."),
    }),
    ("delivery", "lost_parcel", {
        "you": ("find my missing parcel", "open an investigation with {courier}", "send a replacement for the lost parcel"),
        "me": ("report a lost parcel", "find out what happened to my delivery"),
        "ask": ("where my parcel went, the tracking says delivered", "who signed for my parcel"),
        "state": ("the tracking says delivered but nothing came", "{courier} says it was delivered but I never got it",
                  "my parcel has gone missing", "the delivery photo shows somebody else's door"),
        "direct": ("[Parcel marked delivered, not received].", "[My parcel is lost]."),
    }),
    ("delivery", "transit_damage", {
        "you": ("send a replacement for the {product} that was crushed in transit",
                "report the courier damage on {order}"),
        "me": ("report a box that arrived smashed", "get a new one sent, the delivery broke it"),
        "ask": ("what to do about a parcel that arrived crushed",),
        "state": ("the box arrived crushed and the {product} is dented", "the courier dropped the parcel and it broke",
                  "the parcel arrived soaking wet and torn", "the packaging was smashed on arrival"),
        "direct": ("[Arrived damaged], the box was crushed by {courier}.",),
    }),
    ("delivery", "courier_conduct", {
        "you": ("complain to {courier} about the driver", "ask the driver to stop throwing parcels over the gate"),
        "me": ("make a complaint about the delivery driver",),
        "ask": ("why the driver didn't knock", "which courier is delivering my order"),
        "state": ("the driver was rude to my husband", "the courier threw the parcel over the fence",
                  "the driver didn't even knock and just left a card", "the delivery man drove over my lawn"),
        "direct": ("[The driver was rude].", "[Courier left the {product} in the road]."),
    }),
    # -- returns -------------------------------------------------------------------------------------
    ("returns", "exchange_size", {
        "you": ("swap the {wearable} for a size {size}", "exchange my {wearable} for a bigger size",
                "send a smaller size of the {wearable}", "change the {wearable} for the next size up"),
        "me": ("swap my {wearable} for a bigger size", "exchange the {wearable} for a size {size}",
               "change the {wearable} for a smaller pair", "send back the {wearable} for a different size"),
        "ask": ("how to swap the {wearable} for another size", "if I can change the {wearable} for a size {size}"),
        "state": ("the {wearable} are too small", "the {wearable} I got are a size too big", "I ordered the wrong size of {wearable}",
                  "the {wearable} don't fit"),
        "direct": ("[Wrong size], [can I swap the {wearable}]?", "[{wearable} too tight], [need a size {size} instead]."),
    }),
    ("returns", "exchange_model", {
        "you": ("exchange the {product} for the {colour} one", "swap the {product} for {model}",
                "change my order for a different colour"),
        "me": ("swap the {product} for a different colour", "exchange the {product} for {model}",
               "change the {colour} {product} for another colour", "swap it for the bigger model"),
        "ask": ("whether I can exchange the {product} for {model}", "if you can swap the colour of my {product}"),
        "state": ("the {colour} doesn't go with our patio, I'd prefer another colour", "I ordered the wrong model and need {model}",
                  "the {product} is smaller than I thought, I want the bigger one instead"),
        "direct": ("[Exchange for {model}] please.", "[Wrong colour], [I'd like to swap it]."),
    }),
    ("returns", "return_window", {
        "you": ("make an exception to the 30 day return window", "accept my return even though it's a bit late"),
        "me": ("return something I bought {days} ago", "still send back the {product}", "return a sale item"),
        "ask": ("how long I have to return the {product}", "if it's too late to send back the {product}",
                "whether the return period starts from delivery", "what your returns policy is for sale items"),
        "state": ("I've missed the return window by a few days", "I bought the {product} {date} and want to send it back"),
        "direct": ("[Is it too late to return] the {product}?", "[How many days do I have to return] an item?"),
    }),
    ("returns", "dropoff_points", {
        "you": ("tell me the nearest drop-off point for returns", "book a collection for my return"),
        "me": ("drop my return off at a post office", "take the {product} back to a shop", "return it at a parcel locker",
               "drop the return at a Post Office near {town}"),
        "ask": ("where I can drop off my return", "if I can return it at a parcel shop", "whether a courier can collect my return"),
        "state": ("the {product} is too heavy to take to the post office", "there's no drop-off point near me"),
        "direct": ("[Where do I take my return]?", "[Return drop-off] near {town}?"),
    }),
    ("returns", "return_label", {
        "you": ("send me a return label", "email me the returns label for {order}", "send a prepaid label"),
        "me": ("print a return label", "get a returns label for the {product}"),
        "ask": ("where the return label is", "whether the return postage is free", "why the returns label won't print"),
        "state": ("there was no return label in the box", "the return label link doesn't work", "the return label has expired"),
        "direct": ("[Need a return label] for {order}.", "[Returns label] please."),
    }),
    ("returns", "start_return", {
        "you": ("arrange a return for the {product}", "take back the {product}", "collect the {product} I want to return"),
        "me": ("return the {product}", "send the {product} back", "send back {order}", "return one item from {order}",
               "give back the {product} unused"),
        "ask": ("how to send back the {product}", "how returns work", "if I can return the {product} after opening it"),
        "state": ("I changed my mind about the {product}", "I don't need the {product} anymore",
                  "the {product} isn't what I expected so I want my money back", "I ordered two by mistake",
                  "the {kit} is too big for the garden so it's going back"),
        "direct": ("[Return please].", "[I'd like to send the {product} back].", "[Can I return this]?"),
    }),
    ("returns", "return_refund", {
        "you": ("refund my returned {product}", "process the refund for my return", "refund the rest of my return"),
        "me": ("get my refund for the {product} I sent back", "be refunded for the returned item"),
        "ask": ("when I'll get my money for the return", "why my return refund was only partial",
                "why I was only refunded {amount} for the return", "whether you received my return"),
        "state": ("I sent the {product} back {date} and still no refund", "my return was received but not refunded",
                  "you only refunded part of my return", "the refund for my return was {amount} short",
                  "you kept the postage off my return refund"),
        "direct": ("[Refund for my return] still not received.", "[Partial refund] on my returned {product}, [why]?"),
    }),
    ("returns", "return_in_transit", {
        "you": ("confirm you've got my return", "check whether my return arrived at the warehouse"),
        "me": ("track my return", "find out if my return got to you"),
        "ask": ("if my return has reached you", "when you'll receive the {product} I sent back"),
        "state": ("I posted my return {date} and haven't heard anything", "the courier never collected my return",
                  "I lost the proof of postage for my return"),
        "direct": ("[Did my return arrive]?",),
    }),
    ("returns", "gift_return", {
        "you": ("let me exchange a present without the receipt", "give me store credit for a gift"),
        "me": ("return a gift", "exchange a present I was given", "swap a gift for something else"),
        "ask": ("if I can return a gift without a receipt", "how to return something I got as a present"),
        "state": ("I got the {product} as a present but already have one",),
        "direct": ("[Returning a gift], [no receipt].",),
    }),
    # -- product -------------------------------------------------------------------------------------
    ("product", "assembly", {
        "you": ("send me clearer assembly instructions for the {kit}", "explain step 7 of the {kit} instructions",
                "send the missing assembly video"),
        "me": ("put the {kit} together", "assemble the {kit}", "fit the roof panels on the {kit}", "build the {kit}"),
        "ask": ("how to assemble the {kit}", "which screws go where on the {kit}", "how long the {kit} takes to put together",
                "which way round the panels go"),
        "state": ("the holes on the {kit} don't line up", "the instructions for the {kit} make no sense",
                  "I'm stuck on the roof of the {kit}", "the panels of the {kit} won't clip in"),
        "direct": ("[Assembly help] for the {kit}.", "[Instructions for the {kit} are missing a step]."),
    }),
    ("product", "compatibility", {
        "you": ("confirm the {part} fits my {tool}", "check if the battery works with my other tools"),
        "me": ("use the {part} on my {tool}", "use my old batteries with the {tool}", "connect the {gear} to my outside tap"),
        "ask": ("whether the {part} fits the {tool}", "if the battery is compatible with my 18V drill",
                "if the {gear} fits a standard tap", "whether the {tool} works with an extension lead",
                "which {part} fits my {tool}"),
        "state": ("the {part} doesn't fit my {tool}", "the hose connector won't fit my tap"),
        "direct": ("[Will this {part} fit] the {tool}?", "[Compatible with] the old model?"),
    }),
    ("product", "spare_parts", {
        "you": ("sell me a spare {part} for the {tool}", "send a replacement {part}", "order a new {part} for me"),
        "me": ("buy a spare {part}", "buy a spare spool for my strimmer", "order a replacement {part} for my {tool}",
               "get a new {part}"),
        "ask": ("where to buy a spare {part}", "where I can get a replacement {part} for the {tool}",
                "what the part number for the {part} is", "if you stock spare parts for the {product}",
                "where to buy a spare spool"),
        "state": ("the {part} on my {tool} is worn out", "I lost the {part} for the {tool}", "I need a new {part}"),
        "direct": ("[Spare {part}] for the {tool}?", "[Replacement {part}] needed."),
    }),
    ("product", "settings_use", {
        "you": ("explain how to change the cutting height on the {tool}", "tell me which oil the {tool} needs",
                "show me how to wind the strimmer line"),
        "me": ("adjust the cutting height", "change the {part} on my {tool}", "set the timer on the {tool}",
               "use the {tool} on wet grass", "turn on the mulching mode"),
        "ask": ("how to change the settings on the {tool}", "what oil to use in the {tool}",
                "how often to sharpen the blade", "what the flashing light on the {tool} means",
                "how to set the height of the {tool}"),
        "state": ("I can't work out the settings on the {tool}", "the manual doesn't explain the controls"),
        "direct": ("[How does the {tool} work]?", "[What do the buttons on the {tool} do]?"),
    }),
    ("product", "safety", {
        "you": ("tell me if the {tool} is safe to use near children", "check the safety recall on the {product}"),
        "me": ("use the {tool} safely", "use the {product} around pets"),
        "ask": ("whether the {product} is safe for children", "if the {seeds} are poisonous to dogs",
                "if it's safe to use the {tool} in the rain", "whether there's a recall on the {product}",
                "what protective gear I need for the {tool}"),
        "state": ("the {tool} gave me an electric shock", "the {tool} smells of burning", "sparks came out of the {tool}",
                  "the {product} gets dangerously hot"),
        "direct": ("[Is the {tool} safe] for a beginner?", "[Sparks from the {tool}], is it dangerous?"),
    }),
    ("product", "warranty", {
        "you": ("repair my {tool} under warranty", "fix the {tool} under the guarantee", "register my {tool} for the warranty"),
        "me": ("make a warranty claim for the {product}", "get the {tool} repaired", "claim on the guarantee"),
        "ask": ("if my {tool} is still under warranty", "what the warranty covers on the {tool}",
                "how long the guarantee on the {product} lasts", "where to send the {tool} for repair"),
        "state": ("my {tool} broke just inside the warranty", "the {tool} is two years old and under guarantee"),
        "direct": ("[Warranty claim] for my {tool}.", "[Is the motor covered by the warranty]?"),
    }),
    ("product", "fault", {
        "you": ("help me get the {tool} going again", "tell me how to fix the {tool}", "look at my faulty {tool}"),
        "me": ("get the {tool} working", "fix the {product}", "sort out the noise from the {tool}"),
        "ask": ("why my {tool} won't start", "why the {tool} cuts out", "what's wrong with my {tool}",
                "why the {tool} keeps stopping"),
        "state": ("my {tool} won't start", "the {tool} cuts out after a minute", "the {tool} is leaking oil",
                  "the {tool} makes a grinding noise", "the {tool} stopped working halfway through the job",
                  "the motor on the {tool} just hums", "the {tool} won't switch on anymore"),
        "direct": ("[{tool} not working].", "[{tool} broken], [won't start]."),
    }),
    ("product", "defect", {
        "you": ("send a new door for the {kit}", "help with the broken catch on the {kit}"),
        "me": ("fix the door on the {kit}", "stop the {kit} from wobbling"),
        "ask": ("why the door of my {kit} won't stay shut", "how to stop the {kit} roof from leaking",
                "why the {product} is rusting already"),
        "state": ("the door of the {kit} won't stay shut", "the {kit} roof leaks when it rains",
                  "the handle of the {product} snapped", "the {product} is rusting after a month",
                  "the {kit} wobbles even on flat ground", "the hinge on the {kit} has broken",
                  "the paint is peeling off the {product}", "the {gear} split the first time I used it"),
        "direct": ("[The {kit} door keeps blowing open].", "[{product} fell apart] after a week."),
    }),
    ("product", "battery", {
        "you": ("replace the battery that won't hold a charge", "check why my charger flashes red"),
        "me": ("charge the battery properly", "make the battery last longer"),
        "ask": ("how long the battery takes to charge", "why the charger light is flashing red",
                "why my battery only lasts ten minutes"),
        "state": ("the battery on my {tool} won't charge", "the battery dies after ten minutes",
                  "the charger gets very hot", "the battery drains even when it's not used"),
        "direct": ("[Battery not charging].", "[Charger flashing red] on the {tool}."),
    }),
    ("product", "product_info", {
        "you": ("send me the dimensions of the {kit}", "tell me what the {product} is made of"),
        "me": ("know the size of the {kit} before I order", "find the manual for the {product}"),
        "ask": ("how big the {kit} is", "whether the {product} is weatherproof", "if the {product} can stay out in winter",
                "how heavy the {tool} is", "whether the {kit} needs a base", "how loud the {tool} is"),
        "state": ("I lost the manual for the {tool}",),
        "direct": ("[Is the {product} waterproof]?", "[Manual for the {tool}] please."),
    }),
    ("product", "care", {
        "you": ("explain how to store the {tool} over winter", "tell me how to clean the {product}"),
        "me": ("store the {tool} for the winter", "clean the {product}", "service my {tool}", "treat the wood of the {kit}"),
        "ask": ("how to look after the {product}", "how often the {tool} needs a service", "how to sow the {seeds}",
                "when to plant the {seeds}"),
        "state": ("none of the {seeds} came up", "the wood of the {kit} is going grey"),
        "direct": ("[How should I store the {tool}] in winter?",),
    }),
    ("product", "smart_features", {
        "you": ("help me connect the {tool} to the app", "explain how to set a schedule on the {tool}",
                "send the latest firmware for the {tool}"),
        "me": ("pair the {tool} with my phone", "set the {tool} to run at night only", "connect the {tool} to wifi",
               "update the software on the {tool}", "set up the boundary wire for the {tool}"),
        "ask": ("why the app can't find my {tool}", "how to programme the {tool}", "whether the {tool} works with Alexa",
                "what the error code E4 on the {tool} means"),
        "state": ("the app never finds the {tool}", "the {tool} ignores the schedule I set",
                  "the {tool} keeps losing its wifi connection", "the bluetooth won't connect to the {tool}",
                  "the display on the {tool} shows an error code"),
        "direct": ("[App won't connect] to the {tool}.", "[Error E4] on my {tool}, [what does it mean]?"),
    }),
    ("product", "performance", {
        "you": ("tell me why the {tool} cuts so unevenly", "help me get the pressure back on the {tool}"),
        "me": ("get a cleaner cut from the {tool}", "stop the {tool} leaving clumps", "get more power out of the {tool}"),
        "ask": ("why the {tool} leaves strips of grass", "why the {tool} has lost suction", "why the pressure has dropped",
                "whether the {tool} can handle thick branches", "why the {tool} vibrates so much"),
        "state": ("the {tool} leaves uncut strips", "the {tool} has lost its suction", "the {tool} keeps stalling",
                  "the {tool} clogs up every few minutes", "the spray from the {tool} is really weak",
                  "the {tool} won't cut through anything thicker than a pencil", "the {product} isn't working properly"),
        "direct": ("[{tool} cutting badly].", "[{tool} lost power], [any tips]?"),
    }),
    # -- account -------------------------------------------------------------------------------------
    ("account", "profile_details", {
        "you": ("update the phone number on my account", "change my phone number to {phone}",
                "correct my name on my profile", "change the surname on my account", "update my date of birth on my account"),
        "me": ("update my phone number", "change the name on my account", "edit my profile", "change my mobile number",
               "add a second phone number to my account"),
        "ask": ("how to change my phone number on the account", "where I can edit my profile details",
                "why my profile won't save"),
        "state": ("my name is spelt wrong on my profile", "the phone number on my account is out of date",
                  "my profile page won't let me save changes", "I got married and need my surname changed"),
        "direct": ("[New mobile number]: {phone}, [please update my account].", "[Change of name] on my account."),
    }),
    ("account", "email_change", {
        "you": ("change my account email to {email}", "update the email address on my account"),
        "me": ("change the email on my account", "log in with my new email address", "update my email"),
        "ask": ("how to change the email I log in with", "why I can't update my email"),
        "state": ("my old email address doesn't exist anymore", "I can't change my login email"),
        "direct": ("[New email for my account]: {email}.",),
    }),
    ("account", "address_book", {
        "you": ("update the saved address on my profile", "delete an old address from my account",
                "change the default address in my account"),
        "me": ("remove an old address from my address book", "change my saved address", "set a new default address"),
        "ask": ("how to edit the addresses saved on my account",),
        "state": ("my profile still has my old address", "I can't delete the old address in my address book"),
        "direct": ("[Address book] won't let me remove {house} {street}.",),
    }),
    ("account", "password", {
        "you": ("reset my password", "send me a new password reset link", "help me get back into my account"),
        "me": ("reset my password", "change my password", "get into my account"),
        "ask": ("how to reset my password", "why the reset email never arrives", "why my password isn't accepted"),
        "state": ("I forgot my password", "the password reset link has expired", "it says my password is wrong",
                  "the reset email never comes"),
        "direct": ("[Forgot password].", "[Password reset] not working."),
    }),
    ("account", "two_factor", {
        "you": ("turn off two-factor authentication on my account", "send the verification code again",
                "reset my two-step verification"),
        "me": ("set up two-factor authentication", "switch on two-step verification", "change the phone for my login codes"),
        "ask": ("why the verification code never arrives", "how to turn on two-factor authentication",
                "how to move my authenticator app to a new phone"),
        "state": ("the login code never comes by text", "I got a new phone and the authenticator codes don't work",
                  "the verification code says it's invalid"),
        "direct": ("[2FA code not arriving].", "[Security code] doesn't come through."),
    }),
    ("account", "locked_hacked", {
        "you": ("unlock my account", "secure my account, someone else has been using it", "lock my account until I change the password"),
        "me": ("get back into my locked account", "report that my account was hacked"),
        "ask": ("why my account is locked", "who changed my account password", "whether my account has been hacked"),
        "state": ("my account is locked after too many tries", "someone has been logging into my account",
                  "I got an alert about a login from another country", "someone changed my account email",
                  "there are orders in my account I didn't make"),
        "direct": ("[Account locked]!", "[Account hacked], please help."),
    }),
    ("account", "login", {
        "you": ("help me sign in", "fix my login", "look at why the app logs me out"),
        "me": ("log in", "sign in to my account", "get past the login page", "log into the app"),
        "ask": ("why I can't sign in", "why the app keeps logging me out", "why the login page just spins"),
        "state": ("I can't log in", "the login page keeps loading forever", "the app logs me out every time",
                  "sign in fails with an error", "I can't sign in on my phone"),
        "direct": ("[Can't sign in].", "[Login not working] on the app."),
    }),
    ("account", "loyalty", {
        "you": ("add the missing loyalty points for {order}", "move my points to my new account", "link my loyalty card"),
        "me": ("use my loyalty points", "check my points balance", "join the loyalty scheme", "redeem my Green Points"),
        "ask": ("how many points I have", "why my points disappeared", "when my points will be added",
                "how to redeem my loyalty points"),
        "state": ("my loyalty points weren't added for {order}", "my points balance has gone to zero",
                  "my loyalty card isn't linked to my account"),
        "direct": ("[Points missing] from {order}.", "[Loyalty points] not showing."),
    }),
    ("account", "newsletter", {
        "you": ("unsubscribe me from the newsletter", "stop sending me marketing emails", "take me off your mailing list",
                "stop the promotional texts"),
        "me": ("unsubscribe from your emails", "opt out of marketing", "change my email preferences",
               "sign up for the newsletter"),
        "ask": ("how to stop the marketing emails", "why I still get emails after unsubscribing"),
        "state": ("I keep getting your newsletter even though I unsubscribed", "I get three promo emails a day",
                  "I never signed up for your emails"),
        "direct": ("[Unsubscribe] me please.", "[Stop emailing me]."),
    }),
    ("account", "membership", {
        "you": ("cancel my membership", "renew my club membership", "merge my two accounts",
                "move my membership to my new email"),
        "me": ("end my membership", "join the members' club", "combine my old and new accounts",
               "upgrade my account to premium"),
        "ask": ("how to cancel my membership", "when my membership renews", "why I have two accounts",
                "what my membership includes"),
        "state": ("I've ended up with two accounts", "my membership still shows as expired",
                  "my member benefits aren't showing on my account"),
        "direct": ("[Cancel membership] please.", "[Two accounts] under the same name, [merge them]?"),
    }),
    ("account", "data_deletion", {
        "you": ("delete my account", "remove all my personal data", "close my account and delete my details",
                "send me a copy of the data you hold on me"),
        "me": ("close my account", "delete my account and saved details", "make a data access request"),
        "ask": ("how to delete my account", "what personal data you keep about me"),
        "state": ("I don't want an account with you anymore", "I want my data removed under GDPR"),
        "direct": ("[Delete my account].", "[GDPR request]: [erase my data]."),
    }),
    ("account", "order_history", {
        "you": ("show my old orders in my account", "fix the order history page"),
        "me": ("see my past orders", "find an old order in my account", "download my order history"),
        "ask": ("why my order history is empty", "where my past orders are in my account"),
        "state": ("my order history page is blank", "an old order is missing from my account"),
        "direct": ("[Order history] shows nothing.",),
    }),
)

# Team-neutral frames for the parts above: '@' is the part as written, '^' the part with a capital
# first letter. A frame is the whole request sentence; the part inside it is the evidence.
FRAMES = {
    "you": (
        "Could you @?", "Can you @?", "Can you @ please?", "Please @.", "Please could you @?", "Please can you @?",
        "I'd like you to @.", "Would you be able to @?", "Any chance you could @?", "I need you to @.", "pls @",
        "can u @ pls", "Could someone @?", "I was hoping you could @.", "Kindly @.",
        "I would be grateful if you could @.", "I would like to request you to @.", "Need you to @ asap",
        "Are you able to @?", "Is there any way you could @?", "^ please.", "^, thanks.", "Can you help me and @?",
        "Just wondering if you could @.", "Would you mind if you @?", "Could you please @ for me?", "^ pls",
        "Hoping someone can @.", "Is it possible for you to @?", "I am requesting you to @.", "Please do @.",
        "Can somebody @ today?", "Would it be possible to @?", "I'd really appreciate it if you could @.",
    ),
    "me": (
        "Can I @?", "How do I @?", "I'd like to @.", "I want to @.", "Is it possible to @?", "Is it OK to @?",
        "How can I @?", "I would like to @, please.", "Am I able to @?", "I need to @.", "Please tell me how to @.",
        "Wondering if I can @", "how do i @", "want to @ pls", "What do I do to @?", "Would it be possible to @?",
        "I'm trying to @.", "Could I @?", "Is there a way to @?", "I wish to @.", "Can i @", "I want @ please.",
        "Hi, can I @?", "Is there any chance I could @?", "I'm hoping to @.", "Any idea how I can @?",
        "What's the best way to @?", "I have been trying to @ without success.", "Need to @",
        "I am looking to @.", "Is it possible for me to @?", "Help me @ please",
    ),
    "ask": (
        "Any idea @?", "Can you tell me @?", "Could you let me know @?", "I'd like to know @.", "I was wondering @.",
        "Do you know @?", "Please tell me @.", "Just checking @.", "Can you confirm @?", "Could somebody explain @?",
        "wondering @", "I want to know @.", "Kindly advise @.", "Can you check @?", "Not sure @, can you help?",
        "Quick question: @?", "I would like to ask @.", "Could you find out @?", "Let me know @ please.",
        "Do you have any idea @?", "Can anyone tell me @?", "I'm writing to ask @.", "Pls tell me @",
        "Would you be able to tell me @?", "I can't work out @.", "Please let me know @, thanks.",
        "I need to know @.", "I'd be grateful to know @.", "Can u tell me @", "Is anyone able to say @?",
    ),
    "state": (
        "^.", "^!", "^.", "Hi, @.", "^, what can I do?", "^. What now?", "^, please help.", "^, can you help?",
        "^ - any ideas?", "Just to let you know, @.", "I'm afraid @.", "Unfortunately @.", "So @.", "@",
        "^. Not happy.", "^, what should I do?", "It seems @.", "I noticed @.", "^ and I don't know what to do.",
        "^...", "Basically @.", "The problem is @.", "^. Please advise.", "^, is that normal?", "Problem: @.",
        "^ again.", "^. Can someone look into it?", "Hello, @.", "^, it's really annoying.", "Sorry to bother you but @.",
        "^, I'm not sure who to ask.", "I have a problem, @.", "^. Help!", "FYI @.",
    ),
}
FRAME_KIND_WEIGHTS = (("you", 4), ("me", 3), ("ask", 3), ("state", 4), ("direct", 2))

# Noun phrases naming each team's territory, used to set a topic aside ("it's not about the parcel").
TOPICS = (
    ("payments", ("the payment", "the charge on my card", "billing", "the invoice", "my card", "the price I paid",
                  "the money", "the promo code", "a refund of a charge")),
    ("delivery", ("the delivery", "the parcel", "the courier", "tracking", "the delivery date", "shipping",
                  "the driver", "when it arrives")),
    ("returns", ("a return", "sending it back", "an exchange", "the returns label", "a refund for a return",
                 "swapping it", "the return")),
    ("product", ("the product itself", "how the {product} works", "a fault with the {product}", "the quality",
                 "assembly", "spare parts", "the {product} itself", "the warranty")),
    ("account", ("my account", "my password", "logging in", "my profile", "the newsletter", "my loyalty points",
                 "my login", "signing in")),
)
# What a customer says they do *not* want from a team: a noun phrase ("a refund") or a verb phrase ("send it back").
NEG_WANTS = (
    ("payments", ("a refund", "my money back", "a discount", "a price match", "a new invoice", "compensation"),
                 ("dispute the charge", "change how I paid", "cancel the payment", "claim money back")),
    ("delivery", ("a redelivery", "a new delivery date", "tracking details", "a different courier",
                  "a delivery slot"),
                 ("change the delivery", "chase the courier", "rebook the delivery", "track the parcel")),
    ("returns", ("a return", "an exchange", "a return label", "a collection", "a swap", "store credit"),
                ("return it", "send it back", "exchange it", "swap it", "process a return")),
    ("product", ("technical support", "a repair", "a spare part", "instructions", "a warranty claim",
                 "an engineer"),
                ("get it repaired", "fix anything", "order a spare part", "make a warranty claim")),
    ("account", ("a password reset", "a new account", "help logging in", "the newsletter", "more points"),
                ("change my password", "close my account", "update my profile", "unsubscribe", "log in again")),
)
NEG_WANT_NOUN_FRAMES = ("I don't want {w}.", "I'm not asking for {w}.", "I don't need {w}.", "Not looking for {w}.",
                        "I'm not after {w}.", "This is not a request for {w}.", "I do not require {w}.",
                        "I'm not chasing {w}.", "I'm not expecting {w}.", "I'm not asking you for {w}.",
                        "There's no need for {w}.", "I'm not fussed about {w}.", "I'm not interested in {w}.",
                        "Honestly, {w} isn't what I need.", "Rather than {w}, I need something else.",
                        "It's not {w} I'm after.", "I wasn't after {w}.", "Just to be clear, I don't want {w}.",
                        "I'd rather not have {w}.", "Not wanting {w}.", "i dont want {w}",
                        "Not asking for {w} or anything like that.")
NEG_WANT_VERB_FRAMES = ("I don't want to {w}.", "I'm not trying to {w}.", "No need to {w}.", "I don't need to {w}.",
                        "Please don't {w}.", "I'm not looking to {w}.", "I have no wish to {w}.",
                        "I'd rather not {w}.", "I'd prefer not to {w}.", "There's no need to {w}.",
                        "I'm not asking to {w}.", "I don't actually want to {w}.", "I'm not planning to {w}.",
                        "I have no plans to {w}.", "I'm not writing to {w}.", "It's not that I want to {w}.",
                        "I definitely don't want to {w}.", "Not wanting to {w}.", "I'm not keen to {w}.",
                        "Don't need to {w}.", "i dont want to {w}", "Honestly, I don't want to {w}.")
# Contentment with another team's side: "I'm happy with the delivery."
CONTENT_FRAMES = ("I'm happy with {t}.", "^{t} was great.", "No complaints about {t}.", "^{t} is sorted.",
                  "I'm fine with {t}.", "^{t} went smoothly.", "All good with {t}.", "No fault with {t} at all.",
                  "I know {t} is fine.", "^{t} is not a problem.", "I've no issue with {t}.", "^{t} was perfect.",
                  "^{t} was fine.", "Can't fault {t}.", "I've no complaints about {t}.", "Everything's fine with {t}.",
                  "I'm perfectly happy with {t}.", "^{t} was spot on.", "^{t} has been fine.",
                  "Really pleased with {t}.", "No issues with {t} at all.", "^{t} was no bother at all.",
                  "To be fair, {t} was fine.", "^{t} is absolutely fine.", "Happy with {t}, no issues there.",
                  "^{t} was all fine – no complaints there.", "^{t} was fine tbh")

# A team named by the kind of question it answers: "Not a product question."
TEAM_WORDS = (
    ("payments", ("payment", "billing", "card payment", "money", "charge")),
    ("delivery", ("delivery", "shipping", "courier", "tracking", "parcel")),
    ("returns", ("returns", "return", "exchange", "send-back")),
    ("product", ("product", "technical", "warranty", "quality", "how-to")),
    ("account", ("account", "login", "password", "membership", "sign-in")),
)
TEAM_WORD_FRAMES = ("Not a {w} question.", "This isn't a {w} issue.", "It's not a {w} problem.", "No {w} issue here.",
                    "Not a {w} query.", "This is not {w} related.", "It's not really a {w} thing.",
                    "Not a {w} complaint.", "I don't have a {w} problem.", "nothing {w} related",
                    "Not one for the {w} team.", "Please don't pass this to the {w} team.",
                    "There's no {w} side to this.", "The {w} side is all fine.", "Nothing on the {w} side.",
                    "It's not {w} stuff.", "My question isn't {w} related.", "not {w} related btw",
                    "This doesn't need the {w} team.", "It's not a question for the {w} team.")
# Two other teams' topics set aside at once: "I'm happy with the price and the delivery."
PAIR_FRAMES = ("I'm happy with {t} and {t2}.", "It's not about {t} or {t2}.", "Nothing to do with {t} or {t2}.",
               "No problem with {t} or {t2}.", "Not asking about {t} or {t2}.", "^{t} and {t2} are both fine.",
               "I'm not writing about {t} or {t2}.", "Forget {t} and {t2}.", "I have no complaint about {t} or {t2}.",
               "Not about {t} or {t2}.", "^{t} and {t2} were both fine.", "I've no issue with {t} or {t2}.",
               "Nothing wrong with {t} or {t2}.", "Can't fault {t} or {t2}.", "Happy with both {t} and {t2}.",
               "This isn't about {t}, and it isn't about {t2} either.", "^{t} and {t2} were no problem.")
PAIR_WANT_FRAMES = ("I don't want {w} or {w2}.", "I'm not asking for {w} or {w2}.", "No need for {w} or {w2}.",
                    "Not after {w} or {w2}.", "I don't need {w} or {w2}.", "Not looking for {w} or {w2}.",
                    "I'm not expecting {w} or {w2}.", "I'm not chasing {w} or {w2}.",
                    "I don't want {w}, and I don't want {w2} either.", "I'm not interested in {w} or {w2}.")

# Sentences around a request that set another team's topic aside; {t} is a topic of that team.
NEG_BEFORE = (
    "It's not about {t}.", "This is not about {t}.", "Nothing to do with {t}.", "No issue with {t}.",
    "I'm not writing about {t}.", "Not a question about {t}.", "^{t} is all fine.", "I have no complaint about {t}.",
    "It is not regarding {t}.", "not about {t}", "Please note this isn't about {t}.", "^{t} is fine, no problem there.",
    "I'm not asking about {t}.", "^{t} was not the problem.", "Not {t} this time.", "Nothing wrong with {t}.",
    "This has nothing to do with {t}.", "I don't have a problem with {t}.", "My question is not about {t}.",
    "I wasn't asking about {t}.", "I'm not complaining about {t}.", "Leaving {t} aside.", "Not {t}, that's fine.",
    "It is not to do with {t}.", "^{t} is ok.", "Not writing about {t} at all.", "Ignore {t} for a moment.",
    "Putting {t} to one side.", "^{t} was fine, this is purely about something else.", "^{t} can wait.",
    "Forget {t} for now.", "Not fussed about {t}.", "I'm not bothered about {t}.",
    "Just so you know, {t} isn't the issue.", "First off, it's not about {t}.", "To be clear, {t} is fine.",
    "^{t} – no problem there.", "^{t} is all sorted, thanks.", "It's nothing to do with {t} this time.",
    "Don't worry about {t}.", "its not {t}", "Please ignore {t}, that's fine.", "I'm not querying {t}.",
    "My query isn't about {t}.", "This isn't to do with {t}.", "^{t} I'm not worried about.",
    "I'll say first that {t} was fine.",
)
NEG_AFTER = (
    "This is not about {t}.", "(Not about {t}.)", "Nothing to do with {t} by the way.", "^{t} was fine.",
    "I have no problem with {t}.", "Just to be clear, it's not about {t}.", "Not about {t}.",
    "^{t} is ok, that's not the issue.", "I'm not asking about {t}.", "No problem with {t} though.",
    "^{t} itself was fine.", "It isn't about {t}.", "^{t} was fine, by the way.", "(^{t} is fine.)",
    "Just so you know, {t} was fine.", "It's not {t} I'm querying.", "^{t} isn't the problem here.",
    "No issue with {t} at all.", "I'm not worried about {t}.", "Nothing to do with {t}, to be clear.",
    "^{t} was all fine – it's just this.", "This is purely about that, not {t}.", "Not {t}, just to be clear.",
    "im not asking about {t} btw", "^{t} I have no complaints about.", "^{t} can wait, this can't.",
    "Everything else, {t} included, was fine.",
)
# A set-aside clause joined to the request: "{clause}{joiner}request".
NEG_JOIN = (
    "It's not about {t}", "Not {t}", "^{t} is fine", "No problem with {t}", "Not asking about {t}",
    "I don't need help with {t}", "Forget {t}", "It isn't {t}", "Never mind {t}", "^{t} is not the issue",
    "^{t} was fine", "^{t} can wait", "I'm not fussed about {t}", "^{t} is sorted", "Nothing wrong with {t}",
    "I'm not querying {t}", "It's not {t} I'm worried about", "^{t} isn't the problem", "My query isn't about {t}",
    "Not bothered about {t}", "I've no issue with {t}", "This isn't to do with {t}",
)
NEG_JOINERS = (", but ", " - ", ", ", ". ", "; ", ", what I need is this: ", ", my question is: ")

# Texting abbreviations a share of tickets is written with (lower-case, loose punctuation).
TEXTING = {
    "you": ("u",), "your": ("ur",), "please": ("pls", "plz"), "thanks": ("thx", "ta"), "are": ("r",),
    "because": ("cos", "bc"), "tomorrow": ("tmrw",), "before": ("b4",), "really": ("rly",), "what": ("wat",),
    "know": ("kno",), "don't": ("dont",), "can't": ("cant",), "won't": ("wont",), "i'm": ("im",),
    "i've": ("ive",), "doesn't": ("doesnt",), "isn't": ("isnt",), "it's": ("its",), "message": ("msg",),
    "tonight": ("2nite",), "to": ("to", "2"), "for": ("for", "4"), "and": ("and", "&", "n"), "okay": ("ok",),
    "anyone": ("any1",), "someone": ("some1",), "with": ("w/",), "about": ("abt",), "as soon as possible": ("asap",),
}

# Two requests in one ticket, one marked as the main one (it decides the team) and the other as minor.
MAIN_LEADS = ("", "", "Mainly, ", "The main thing: ", "Most importantly, ", "First and most urgent: ",
              "The urgent thing is this: ", "My main question: ", "Priority: ", "Top of my list: ", "Most of all, ",
              "The important bit: ", "Key issue: ", "Number one: ", "Main problem - ", "1) ", "Mostly, ",
              "Above all, ", "Please, most importantly, ", "The main problem: ", "The pressing matter: ",
              "What I need most: ", "First things first: ", "Most urgently, ", "My main concern: ", "Primarily, ",
              "The real issue: ", "Urgent: ", "Mainly I'm writing because ", "The big thing: ",
              "What I'm really after: ", "Main reason for writing - ", "most important: ", "mainly ",
              "The real reason for my email: ", "The thing I actually need: ", "What's really bothering me: ",
              "Main thing first: ", "Most urgent first – ", "First and foremost, ", "Right, the main thing: ",
              "Chiefly, ", "The thing that matters: ", "Main question – ", "URGENT - ", "main thing: ", "Key thing: ",
              "Before anything else, ", "What I need sorted first: ")
MAIN_LEADS_AFTER = ("But the urgent thing: ", "Mainly though, ", "What I really need: ", "More importantly, ",
                    "The main reason I'm writing: ", "But mostly, ", "Anyway, the real problem: ",
                    "The priority though: ", "What matters most: ", "My real question: ", "But first of all, ",
                    "The thing I need sorted today: ", "But above all, ", "But the main thing is this: ",
                    "Mostly though, ", "The pressing matter is this: ", "What I actually need: ",
                    "The bigger problem: ", "But my real reason for writing: ", "More urgently, ",
                    "but mainly ", "The important one: ", "More to the point, ", "The real reason I'm writing: ",
                    "What's really bothering me though: ", "But the thing I actually need: ",
                    "Anyway, the main thing: ", "Now the important bit: ", "Right, the real issue: ",
                    "But what I really need sorted: ", "Much more importantly, ", "But the bigger issue – ",
                    "What I'm actually writing about: ", "Main thing though – ", "but the real issue is this: ",
                    "Far more urgent: ", "Anyway, the thing I need help with: ")
MINOR_LEADS_AFTER = ("Less important, but ", "Not urgent, but ", "Minor thing: ", "Also, when you have a moment, ",
                     "P.S. ", "Small thing too: ", "Oh and, no rush, ", "Separately (not urgent), ", "Secondly, ",
                     "Less pressing: ", "Lower priority: ", "A side note: ", "Unrelated, but ", "2) ",
                     "And another small thing, ", "Whenever you get a chance, ", "By the way, ", "Also, ",
                     "The other thing is ", "The minor thing: ", "Oh, and ", "Incidentally, ", "On a separate note, ",
                     "As an aside, ", "BTW ", "One more, less important, thing: ", "Also - ", "And separately, ",
                     "Much less important: ", "btw ", "also ", "On a lighter note, ", "While I think of it, ",
                     "Also, no rush, ", "Also, when you get a sec: ", "Not a big deal, but ",
                     "One other small thing – ",
                     "Also – and this can wait – ", "And while I'm here, ", "Slightly unrelated, but ",
                     "Another thing for when you get a moment: ", "oh and also ", "Lastly, and less importantly, ",
                     "A second, smaller thing: ", "Whilst I'm at it, ", "PS - ")
MINOR_LEADS_BEFORE = ("Small thing first: ", "Not urgent, but ", "A minor point: ", "Before I forget, ",
                      "Quick aside: ", "One little thing: ", "A side note before the main thing: ", "Low priority: ",
                      "Something small: ", "Unrelated, but ", "First a small thing: ", "By the way, ",
                      "Not the main thing, but ", "Before the real question: ", "Minor one first: ",
                      "Quick one that can wait: ", "First, a quick one I can chase later: ",
                      "Quick one first, no rush: ", "While I think of it, ", "Before the main thing, a small one: ",
                      "A quick one first (not urgent): ", "Small one to start with: ", "Just so I don't forget, ",
                      "Not the main reason I'm writing, but ", "This can wait, but ", "Side issue first – ",
                      "Quickly, before the main thing: ", "Minor point to start: ", "just quickly, ",
                      "I'll mention this first, though I can chase it later: ", "Something that's not urgent: ")
# Matching pairs of markers: the main request after the first, the minor one after the second.
PAIRED_LEADS = (
    ("The big one: ", "The small one: "), ("Most pressing: ", "Less pressing: "), ("Primary: ", "Secondary: "),
    ("Urgent: ", "Not urgent: "), ("First, and most important: ", "Second, and whenever: "),
    ("Main issue - ", "Minor issue - "), ("Important: ", "Less important: "), ("1. (urgent) ", "2. (can wait) "),
    ("My main question: ", "A smaller one: "), ("The main thing: ", "The other thing: "),
    ("Priority one: ", "Low priority: "), ("What I need today: ", "What can wait: "),
    ("The real problem: ", "A side issue: "), ("Number one: ", "Number two, not urgent: "),
    ("The thing I actually need: ", "The thing that can wait: "), ("Main question – ", "Side question – "),
    ("Important – ", "Not important – "), ("Urgent bit: ", "Non-urgent bit: "), ("Today please: ", "Whenever: "),
    ("Needs sorting now: ", "No rush on this one: "), ("The pressing one – ", "The not-so-pressing one – "),
    ("main one: ", "minor one: "),
)
# Softeners after the minor request ("..., but that can wait"): they mark it as the lesser topic from behind.
MINOR_TAILS = ("", "", "", ", no rush", " but that can wait", ", but whatever", " but I'll live with it",
               ", not urgent", " - low priority", " but it's not important", ", but I'll check that myself first",
               " but not yet", ", whenever", " (not urgent)", ", but that's a minor thing", ", no big deal",
               ", no hurry", " but that's for later", ", but it can wait a week", " - not a priority",
               ", but only if you have time", " but don't worry about that for now", ", though that's minor",
               ", though I can chase that later", ", no rush at all", ", but that one can wait",
               ", but it's really not urgent", " but that's a small thing", ", not a big deal",
               ", but it's not the main thing", ", but happy to wait on that", " - no rush on that one",
               " but that's by the by", ", that's less pressing", " (no rush)")

# Words a share of tickets leaves out or bends, as people do who write English as a second language or in a hurry
# ("i not receive code", "mower blade not turn").
DROPPABLE = ("the", "a", "an", "is", "are", "was", "has", "have", "do", "does", "did", "will", "to", "my", "it")
BENT = {"didn't": ("not", "no"), "doesn't": ("not",), "haven't": ("not", "no"), "hasn't": ("not",),
        "won't": ("not", "no"), "isn't": ("not",), "can't": ("cannot", "can not", "not can"), "don't": ("not",),
        "received": ("receive", "recieve"), "arrived": ("arrive", "come"), "wasn't": ("not",), "aren't": ("not",),
        "I'm": ("I am",), "I've": ("I have",), "I'd": ("I want",), "it's": ("is",)}

# ---------------------------------------------------------------------------------------------------
# The per-team phrasebook modules add to the tables above (more sub-intents and more ways to write each).
# ---------------------------------------------------------------------------------------------------
from ticketnet.data.synth import phrasebook as _phrasebook  # (after the tables above: no cycle)

SUBINTENTS = _phrasebook.extend_subintents(SUBINTENTS)
SHORT = _phrasebook.extend_table(SHORT, "SHORT")
ASIDES = _phrasebook.extend_table(ASIDES, "ASIDES")
TOPICS = _phrasebook.extend_table(TOPICS, "TOPICS")
DETAILS = _phrasebook.extend_table(DETAILS, "DETAILS")
NEG_WANTS = _phrasebook.extend_wants(NEG_WANTS)
